// RUN: grove-opt %s -split-input-file --grove-insert-collectives="bucket-bytes=64" | FileCheck %s --check-prefix=DENSE
// Dense options say nothing, also at a Local AdaAlter (its warning is for
// compressor and error options only).
// RUN: grove-opt %s -split-input-file --grove-insert-collectives="bucket-bytes=64" -verify-diagnostics > /dev/null
// RUN: grove-opt %s -split-input-file --grove-insert-collectives="compressor=grbs ratio=4 error=feedback seed=9" | FileCheck %s --check-prefix=EF
// RUN: grove-opt %s -split-input-file --grove-insert-collectives="compressor=grbs ratio=8 error=reset sync-period=3 period-ratio=2" | FileCheck %s --check-prefix=CSER
// RUN: grove-opt %s -split-input-file --grove-insert-collectives="compressor=bf16" | FileCheck %s --check-prefix=BF16
// RUN: grove-opt %s -split-input-file --grove-insert-collectives="compressor=topk ratio=4 error=feedback" | FileCheck %s --check-prefix=TOPK
// RUN: grove-opt %s -split-input-file --grove-insert-collectives="compressor=sign error=feedback" | FileCheck %s --check-prefix=SIGN
// RUN: grove-opt %s -split-input-file --grove-insert-collectives="compressor=powersgd matrix-rank=1 error=feedback" | FileCheck %s --check-prefix=PSGD
// RUN: grove-opt %s -split-input-file --grove-insert-collectives="compressor=randk ratio=4" | FileCheck %s --check-prefix=RANDK
// RUN: grove-opt %s -split-input-file --grove-insert-collectives="compressor=int8 error=feedback" | FileCheck %s --check-prefix=INT8

// grove-insert-collectives on an optimizer whose gradients the backward
// computes in the order g1 (the 4x4 param's), then g0, then g2.

grove.param @w0 : tensor<8xf32>
grove.param @w1 : tensor<4x4xf32>
grove.param @w2 : tensor<2xf32>
func.func @step(%x: tensor<8xf32>, %y: tensor<4x4xf32>, %z: tensor<2xf32>) {
  %g1 = grove.mul %y, %y : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %g0 = grove.mul %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %g2 = grove.mul %z, %z : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  grove.sgd [@w0, @w1, @w2] (%g0, %g1, %g2) {lr = 0.1 : f64}
      : tensor<8xf32>, tensor<4x4xf32>, tensor<2xf32>
  return
}

// Dense, buckets of at most 64 bytes: g1 (64 bytes) alone, right after it
// is computed; then g0 and g2 (40 bytes) together after g2.
// DENSE-LABEL: func.func @step
// The options, for the ranks to compare before they exchange anything.
// DENSE-SAME: attributes {grove.collectives = "grove-insert-collectives{batch-size=32 bucket-bytes=64 compressor=none
// DENSE: %[[G1:.*]] = grove.mul %{{.*}}, %{{.*}} : (tensor<4x4xf32>
// DENSE: %[[F1:.*]] = grove.reshape %[[G1]] : tensor<4x4xf32> -> tensor<16xf32>
// DENSE: %[[M1:.*]] = grove.all_reduce mean %[[F1]] : tensor<16xf32>
// DENSE: %[[A1:.*]] = grove.reshape %[[M1]] : tensor<16xf32> -> tensor<4x4xf32>
// DENSE: %[[G0:.*]] = grove.mul %{{.*}}, %{{.*}} : (tensor<8xf32>
// DENSE: %[[G2:.*]] = grove.mul %{{.*}}, %{{.*}} : (tensor<2xf32>
// DENSE: %[[F0:.*]] = grove.reshape %[[G0]] : tensor<8xf32> -> tensor<8xf32>
// DENSE: %[[F2:.*]] = grove.reshape %[[G2]] : tensor<2xf32> -> tensor<2xf32>
// DENSE: %[[B:.*]] = grove.concat %[[F0]], %[[F2]] {axis = 0 : i64} : (tensor<8xf32>, tensor<2xf32>) -> tensor<10xf32>
// DENSE: %[[M:.*]] = grove.all_reduce mean %[[B]] : tensor<10xf32>
// DENSE: %[[S0:.*]] = grove.slice %[[M]] [0] [8] [1]
// DENSE: %[[S2:.*]] = grove.slice %[[M]] [8] [10] [1]
// DENSE: %[[A0:.*]] = grove.reshape %[[S0]]
// DENSE: %[[A2:.*]] = grove.reshape %[[S2]]
// DENSE: grove.sgd [@w0, @w1, @w2](%[[A0]], %[[A1]], %[[A2]])
// DENSE-NOT: grove.all_reduce

// GRBS with error feedback: one bucket of 26 elements, its residual state,
// a block of 26 / 4 = 6 at a draw from the step counter, the residual
// keeping what was not sent, the counter counting the call.
// EF: grove.param @collectives.step : tensor<i64> = 0 : i64
// EF: grove.param @collectives.bucket0.residual : tensor<26xf32> = 0.000000e+00 : f32
// EF-LABEL: func.func @step
// EF: %[[T:.*]] = grove.get_param @collectives.step : tensor<i64>
// EF: %[[CAT:.*]] = grove.concat {{.*}} -> tensor<26xf32>
// EF: %[[R:.*]] = grove.get_param @collectives.bucket0.residual : tensor<26xf32>
// EF: %[[E:.*]] = grove.add %[[CAT]], %[[R]]
// EF: %[[OFF:.*]] = grove.random_block %[[T]] {block = 6 : i64, extent = 26 : i64, seed = 9 : i64, stream = 0 : i64}
// EF: %[[BLK:.*]] = tensor.extract_slice %[[E]][%[[OFF]]] [6] [1]
// EF: %[[Z:.*]] = grove.constant dense<0.000000e+00> : tensor<26xf32>
// EF: %[[AVG:.*]] = grove.all_reduce mean %[[BLK]] : tensor<6xf32>
// EF: %[[SENT:.*]] = tensor.insert_slice %[[AVG]] into %[[Z]][%[[OFF]]] [6] [1]
// EF: %[[OWN:.*]] = tensor.insert_slice %[[BLK]] into %{{.*}}[%[[OFF]]] [6] [1]
// EF: %[[KEPT:.*]] = grove.sub %[[E]], %[[OWN]]
// EF: grove.set_param @collectives.bucket0.residual = %[[KEPT]]
// EF: grove.slice %[[SENT]] [0] [16] [1]
// EF: grove.sgd
// EF: %[[V:.*]] = tensor.extract %[[T]][] : tensor<i64>
// EF: %[[NEXT:.*]] = arith.addi %[[V]], %{{.*}} : i64
// EF: %[[NT:.*]] = tensor.from_elements %[[NEXT]] : tensor<i64>
// EF: grove.set_param @collectives.step = %[[NT]]
// EF-NEXT: return

// bf16: each rank's share of the mean (the bucket over the world size)
// rounded, summed in bf16, widened back.
// BF16-LABEL: func.func @step
// BF16-SAME: grove.collectives = "grove-insert-collectives{batch-size=32 bucket-bytes=26214400 compressor=bf16 
// BF16: %[[CAT:.*]] = grove.concat {{.*}} -> tensor<26xf32>
// BF16: %[[N:.*]] = grove.world_size : index
// BF16: %[[SHARE:.*]] = grove.div %[[CAT]], %{{.*}} : (tensor<26xf32>, tensor<f32>)
// BF16: %[[H:.*]] = grove.convert %[[SHARE]] : tensor<26xf32> -> tensor<26xbf16>
// BF16: %[[M:.*]] = grove.all_reduce sum %[[H]] : tensor<26xbf16>
// BF16: %[[W:.*]] = grove.convert %[[M]] : tensor<26xbf16> -> tensor<26xf32>
// BF16: grove.slice %[[W]] [0] [16] [1]

// top-k with error feedback: the 26 / 4 = 6 largest of the bucket plus its
// residual, their values and indices gathered from every rank, added up
// and divided by the world size; the residual keeps the rest.
// TOPK-LABEL: func.func @step
// TOPK: %[[E:.*]] = grove.add %{{.*}}, %{{.*}} : (tensor<26xf32>, tensor<26xf32>)
// TOPK: %[[V:.*]], %[[I:.*]] = grove.top_k %[[E]] {k = 6 : i64} : tensor<26xf32> -> (tensor<6xf32>, tensor<6xi32>)
// TOPK: %[[GV:.*]] = grove.all_gather %[[V]] : (tensor<6xf32>) -> tensor<?x6xf32>
// TOPK: %[[GI:.*]] = grove.all_gather %[[I]] : (tensor<6xi32>) -> tensor<?x6xi32>
// TOPK: %[[SUM:.*]] = grove.scatter_add %{{.*}}, %[[GI]], %[[GV]]
// TOPK: %[[N:.*]] = grove.world_size : index
// TOPK: %[[AVG:.*]] = grove.div %[[SUM]], %{{.*}} : (tensor<26xf32>, tensor<f32>)
// TOPK: %[[OWN:.*]] = grove.scatter_add %{{.*}}, %[[I]], %[[V]]
// TOPK: %[[R:.*]] = grove.sub %[[E]], %[[OWN]]
// TOPK: grove.set_param @collectives.bucket0.residual = %[[R]]
// TOPK: grove.slice %[[AVG]] [0] [16] [1]

// int8 + error feedback: one scale (max |e| / 127) and 26 codes in 7
// words, both gathered; the average of every rank's decoded codes, and
// this rank's own, which the residual subtracts.
// INT8-LABEL: func.func @step
// INT8: %[[E:.*]] = grove.add %{{.*}}, %{{.*}} : (tensor<26xf32>, tensor<26xf32>)
// INT8: %[[MAX:.*]] = grove.reduce_max %{{.*}} {axes = array<i64: 0>, keepdims} : tensor<26xf32> -> tensor<1xf32>
// INT8: %[[S:.*]] = grove.div %[[MAX]], %{{.*}} : (tensor<1xf32>, tensor<f32>) -> tensor<1xf32>
// INT8: %[[P:.*]] = grove.pack_int8 %[[E]], %[[S]] : (tensor<26xf32>, tensor<1xf32>) -> tensor<7xi32>
// INT8: %[[GS:.*]] = grove.all_gather %[[S]] : (tensor<1xf32>) -> tensor<?x1xf32>
// INT8: %[[GSF:.*]] = grove.reshape %[[GS]] : tensor<?x1xf32> -> tensor<?xf32>
// INT8: %[[GP:.*]] = grove.all_gather %[[P]] : (tensor<7xi32>) -> tensor<?x7xi32>
// INT8: %[[AVG:.*]] = grove.mean_of_int8 %[[GP]], %[[GSF]] : (tensor<?x7xi32>, tensor<?xf32>) -> tensor<26xf32>
// INT8: %[[OWN:.*]] = grove.mean_of_int8 %{{.*}}, %[[S]] : (tensor<1x7xi32>, tensor<1xf32>) -> tensor<26xf32>
// INT8: %[[R:.*]] = grove.sub %[[E]], %[[OWN]]
// INT8: grove.set_param @collectives.bucket0.residual = %[[R]]
// INT8: grove.slice %[[AVG]] [0] [16] [1]

// sign with error feedback (EF-signSGD): 1 bit an element and one scale
// (the mean magnitude) a rank.
// SIGN-LABEL: func.func @step
// SIGN: %[[E:.*]] = grove.add %{{.*}}, %{{.*}} : (tensor<26xf32>, tensor<26xf32>)
// SIGN: %[[S:.*]] = grove.reduce_mean %{{.*}} {axes = array<i64: 0>, keepdims} : tensor<26xf32> -> tensor<1xf32>
// SIGN: %[[P:.*]] = grove.pack_signs %[[E]] : tensor<26xf32> -> tensor<1xi32>
// SIGN: %[[GS:.*]] = grove.all_gather %[[S]] : (tensor<1xf32>) -> tensor<?x1xf32>
// SIGN: %[[GSF:.*]] = grove.reshape %[[GS]] : tensor<?x1xf32> -> tensor<?xf32>
// SIGN: %[[GP:.*]] = grove.all_gather %[[P]] : (tensor<1xi32>) -> tensor<?x1xi32>
// SIGN: %[[AVG:.*]] = grove.mean_of_signs %[[GP]], %[[GSF]] : (tensor<?x1xi32>, tensor<?xf32>) -> tensor<26xf32>
// SIGN: %[[OWN:.*]] = grove.mean_of_signs %{{.*}}, %[[S]] : (tensor<1x1xi32>, tensor<1xf32>) -> tensor<26xf32>
// SIGN: grove.sub %[[E]], %[[OWN]]
// SIGN: grove.slice %[[AVG]] [0] [16] [1]

// PowerSGD rank 1: the 4x4 gradient ((4 + 4) * 1 < 16) as P = M Q with Q
// state (random on the first call), the others with the Ps in one
// all-reduce; P orthogonalised; Q = Mᵀ P averaged and kept; P Qᵀ.
// PSGD: grove.param @collectives.bucket0.powersgd.q0 : tensor<4x1xf32> = 0.000000e+00 : f32
// PSGD-LABEL: func.func @step
// PSGD: %[[T:.*]] = grove.get_param @collectives.step
// PSGD: %[[Q0:.*]] = grove.get_param @collectives.bucket0.powersgd.q0 : tensor<4x1xf32>
// PSGD: %[[RND:.*]] = grove.random_uniform {seed = 0 : i64, stream = 0 : i64} : tensor<4x1xf32>
// PSGD: %[[Q:.*]] = grove.select %{{.*}}, %[[RND]], %[[Q0]]
// PSGD: %[[P:.*]] = grove.matmul %{{.*}}, %[[Q]] : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
// PSGD: grove.all_reduce mean %{{.*}} : tensor<14xf32>
// PSGD: grove.sqrt
// PSGD: %[[QN:.*]] = grove.matmul %{{.*}}, %{{.*}} {transpose_lhs} : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
// PSGD: %[[QM:.*]] = grove.all_reduce mean %{{.*}} : tensor<4xf32>
// PSGD: %[[QR:.*]] = grove.reshape %[[QM]] : tensor<4xf32> -> tensor<4x1xf32>
// PSGD: grove.set_param @collectives.bucket0.powersgd.q0 = %[[QR]]
// PSGD: grove.matmul %{{.*}}, %[[QR]] {transpose_rhs} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
// PSGD: grove.set_param @collectives.bucket0.residual

// random-k: 26 / 4 = 6 indices every rank draws alike, the values there
// averaged densely and put back.
// RANDK-LABEL: func.func @step
// RANDK: %[[T:.*]] = grove.get_param @collectives.step
// RANDK: %[[CAT:.*]] = grove.concat {{.*}} -> tensor<26xf32>
// RANDK: %[[I:.*]] = grove.random_indices %[[T]] {extent = 26 : i64, seed = 0 : i64, stream = 0 : i64} : (tensor<i64>) -> tensor<6xi32>
// RANDK: %[[V:.*]] = grove.gather %[[CAT]], %[[I]] : (tensor<26xf32>, tensor<6xi32>) -> tensor<6xf32>
// RANDK: %[[M:.*]] = grove.all_reduce mean %[[V]] : tensor<6xf32>
// RANDK: %[[A:.*]] = grove.scatter_add %{{.*}}, %[[I]], %[[M]]
// RANDK: grove.slice %[[A]] [0] [16] [1]

// Error reset (CSER): the gradients go to the optimizer as they are; after its local
// step, each param averages a block of 1/8 (C1) or, on every third step,
// 1/2 (C2), all of a step's blocks in one collective.
// CSER-LABEL: func.func @step
// CSER: %[[T:.*]] = grove.get_param @collectives.step
// CSER-NOT: grove.all_reduce
// CSER: grove.sgd [@w0, @w1, @w2](%{{.*}}, %{{.*}}, %{{.*}})
// CSER: %[[P0:.*]] = grove.get_param @w0 : tensor<8xf32>
// CSER: %[[P1:.*]] = grove.get_param @w1 : tensor<4x4xf32>
// CSER: %[[P2:.*]] = grove.get_param @w2 : tensor<2xf32>
// CSER: %[[V:.*]] = tensor.extract %[[T]][] : tensor<i64>
// CSER: %[[V1:.*]] = arith.addi %[[V]], %{{.*}} : i64
// CSER: %[[REM:.*]] = arith.remsi %[[V1]], %{{.*}} : i64
// CSER: %[[C2:.*]] = arith.cmpi eq, %[[REM]], %{{.*}} : i64
// CSER: %[[NEW:.*]]:3 = scf.if %[[C2]] -> (tensor<8xf32>, tensor<4x4xf32>, tensor<2xf32>) {
// CSER: grove.random_block %[[T]] {block = 4 : i64, extent = 8 : i64, seed = 0 : i64, stream = 0 : i64}
// CSER: grove.random_block %[[T]] {block = 8 : i64, extent = 16 : i64, seed = 0 : i64, stream = 1 : i64}
// CSER: grove.random_block %[[T]] {block = 1 : i64, extent = 2 : i64, seed = 0 : i64, stream = 2 : i64}
// CSER: grove.all_reduce mean %{{.*}} : tensor<13xf32>
// CSER: } else {
// CSER: grove.random_block %[[T]] {block = 1 : i64, extent = 8 : i64, seed = 0 : i64, stream = 0 : i64}
// CSER: grove.random_block %[[T]] {block = 2 : i64, extent = 16 : i64, seed = 0 : i64, stream = 1 : i64}
// CSER: grove.random_block %[[T]] {block = 1 : i64, extent = 2 : i64, seed = 0 : i64, stream = 2 : i64}
// CSER: grove.all_reduce mean %{{.*}} : tensor<4xf32>
// CSER: }
// CSER: grove.set_param @w0 = %[[NEW]]#0
// CSER: grove.set_param @w1 = %[[NEW]]#1
// CSER: grove.set_param @w2 = %[[NEW]]#2

// -----

// Local AdaAlter: no gradient collective; on every `period`-th step (by the
// optimizer's own count, after its step) the params and accumulators are
// averaged and the accumulators become the denominators.
grove.param @w : tensor<8xf32>
func.func @local(%g: tensor<8xf32>) {
  grove.adaalter [@w] (%g) {lr = 0.1 : f64, period = 4} : tensor<8xf32>
  return
}
// DENSE: grove.param @w.adaalter.accumulator : tensor<8xf32> = 0.000000e+00 : f32
// DENSE: grove.param @w.adaalter.denominator : tensor<8xf32> = 0.000000e+00 : f32
// DENSE: grove.param @adaalter.step : tensor<i64> = 0 : i64
// DENSE-LABEL: func.func @local
// DENSE-NOT: grove.all_reduce
// DENSE: grove.adaalter [@w](%{{.*}})
// DENSE: %[[P:.*]] = grove.get_param @w : tensor<8xf32>
// DENSE: %[[A:.*]] = grove.get_param @w.adaalter.accumulator
// DENSE: %[[D:.*]] = grove.get_param @w.adaalter.denominator
// DENSE: %[[T:.*]] = grove.get_param @adaalter.step : tensor<i64>
// DENSE: %[[TI:.*]] = tensor.extract %[[T]][] : tensor<i64>
// DENSE: arith.remsi %[[TI]], %{{.*}} : i64
// DENSE: %[[R:.*]]:3 = scf.if %{{.*}} -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
// DENSE: %[[M:.*]] = grove.all_reduce mean %{{.*}} : tensor<16xf32>
// DENSE: %[[MP:.*]] = grove.slice %[[M]] [0] [8] [1]
// DENSE: %[[MA:.*]] = grove.slice %[[M]] [8] [16] [1]
// DENSE: %[[RP:.*]] = grove.reshape %[[MP]]
// DENSE: %[[RA:.*]] = grove.reshape %[[MA]]
// DENSE: scf.yield %[[RP]], %[[RA]], %[[RA]]
// DENSE: } else {
// DENSE: scf.yield %[[P]], %[[A]], %[[D]]
// DENSE: grove.set_param @w = %[[R]]#0
// DENSE: grove.set_param @w.adaalter.accumulator = %[[R]]#1
// DENSE: grove.set_param @w.adaalter.denominator = %[[R]]#2

// -----

// Local AdaAlter after a warm-up of W = 3 fully synchronous steps (the
// authors' --warmup-steps): while the count before the step is below W, the
// gradients are averaged (in buckets) before it; after it, the params and
// accumulators are averaged where t >= W and t - W is a multiple of H, so
// the period counts from the warm-up's last step, whose average makes the
// ranks agree at the switch.
grove.param @w : tensor<8xf32>
grove.param @b : tensor<8xf32>
func.func @warm(%gw: tensor<8xf32>, %gb: tensor<8xf32>) {
  grove.adaalter [@w, @b] (%gw, %gb) {lr = 0.1 : f64, period = 4, sync_warmup_steps = 3} : tensor<8xf32>, tensor<8xf32>
  return
}
// DENSE-LABEL: func.func @warm
// DENSE-SAME: (%[[GW:.*]]: tensor<8xf32>, %[[GB:.*]]: tensor<8xf32>)
// DENSE: %[[T0:.*]] = grove.get_param @adaalter.step : tensor<i64>
// DENSE: %[[T0I:.*]] = tensor.extract %[[T0]][] : tensor<i64>
// DENSE: %[[W:.*]] = arith.constant 3 : i64
// DENSE: %[[WARM:.*]] = arith.cmpi slt, %[[T0I]], %[[W]] : i64
// DENSE: %[[G:.*]]:2 = scf.if %[[WARM]] -> (tensor<8xf32>, tensor<8xf32>) {
// DENSE: %[[GM:.*]] = grove.all_reduce mean %{{.*}} : tensor<16xf32>
// DENSE: %[[GW1:.*]] = grove.slice %[[GM]] [0] [8] [1]
// DENSE: %[[GB1:.*]] = grove.slice %[[GM]] [8] [16] [1]
// DENSE: %[[GW2:.*]] = grove.reshape %[[GW1]]
// DENSE: %[[GB2:.*]] = grove.reshape %[[GB1]]
// DENSE: scf.yield %[[GW2]], %[[GB2]]
// DENSE: } else {
// DENSE: scf.yield %[[GW]], %[[GB]]
// DENSE: }
// DENSE: grove.adaalter [@w, @b](%[[G]]#0, %[[G]]#1) {lr = 1.000000e-01 : f64, period = 4 : i64, sync_warmup_steps = 3 : i64}
// DENSE: %[[T:.*]] = grove.get_param @adaalter.step : tensor<i64>
// DENSE: %[[TI:.*]] = tensor.extract %[[T]][] : tensor<i64>
// DENSE: %[[MINUS:.*]] = arith.constant -3 : i64
// DENSE: %[[SINCE:.*]] = arith.addi %[[TI]], %[[MINUS]] : i64
// DENSE: %[[H:.*]] = arith.constant 4 : i64
// DENSE: %[[REM:.*]] = arith.remsi %[[SINCE]], %[[H]] : i64
// DENSE: %[[ON:.*]] = arith.cmpi eq, %[[REM]], %{{.*}} : i64
// DENSE: %[[TI2:.*]] = tensor.extract %[[T]][] : tensor<i64>
// DENSE: %[[W2:.*]] = arith.constant 3 : i64
// DENSE: %[[AFTER:.*]] = arith.cmpi sge, %[[TI2]], %[[W2]] : i64
// DENSE: %[[SYNC:.*]] = arith.andi %[[ON]], %[[AFTER]] : i1
// DENSE: %[[R:.*]]:6 = scf.if %[[SYNC]]
// DENSE-COUNT-2: grove.all_reduce mean %{{.*}} : tensor<16xf32>
// DENSE: } else {
// DENSE: grove.set_param @w = %[[R]]#0
// DENSE: grove.set_param @w.adaalter.denominator = %[[R]]#4
