// RUN: grove-opt %s --grove-insert-collectives="compressor=grbs error=feedback ratio=auto network-gbps=1 world-size=4 bucket-bytes=1048576 batch-size=256" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLOW
// RUN: grove-opt %s --grove-insert-collectives="compressor=grbs error=feedback ratio=auto network-gbps=100 world-size=4 bucket-bytes=1048576 batch-size=256" 2>&1 | FileCheck %s --check-prefix=FAST
// RUN: grove-opt %s --grove-insert-collectives="compressor=grbs error=feedback ratio=auto network-gbps=100 world-size=4 bucket-bytes=1048576 batch-size=256" 2>/dev/null | FileCheck %s --check-prefix=FASTSTATE
// RUN: grove-opt %s --grove-insert-collectives="compressor=topk error=feedback ratio=auto network-gbps=1 world-size=8 bucket-bytes=1048576 batch-size=256" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOPK
// RUN: grove-opt %s --grove-insert-collectives="compressor=grbs error=feedback ratio=auto network-gbps=1 world-size=8 bucket-bytes=1048576 batch-size=256" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GRBS8
// RUN: grove-opt %s --grove-insert-collectives="compressor=grbs error=feedback ratio=auto network-gbps=4 world-size=4 bucket-bytes=1048576 batch-size=256" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GRBS4
// RUN: grove-opt %s --grove-insert-collectives="compressor=bf16,grbs error=feedback ratio=auto network-gbps=4 world-size=4 bucket-bytes=1048576 batch-size=256" 2>&1 | FileCheck %s --check-prefix=HALF

// The network cost model (CollectiveCostModel.cpp): two 1 MiB gradients,
// the backward computes g2 first, then g1 (2 * 256 * 512 * 512 flops,
// 2.684 ms at the default 50 GFLOP/s) which g2's collective can hide
// behind; nothing is left to hide g1's.

grove.param @w1 : tensor<512x512xf32>
grove.param @w2 : tensor<512x512xf32>
func.func @step(%x: tensor<?x512xf32>) {
  %g2 = grove.matmul %x, %x {transpose_lhs} : (tensor<?x512xf32>, tensor<?x512xf32>) -> tensor<512x512xf32>
  %g1 = grove.matmul %x, %x {transpose_lhs} : (tensor<?x512xf32>, tensor<?x512xf32>) -> tensor<512x512xf32>
  grove.sgd [@w1, @w2] (%g1, %g2) {lr = 0.1 : f64} : tensor<512x512xf32>, tensor<512x512xf32>
  return
}

// At 1 Gbps a dense ring all-reduce of 1 MiB over 4 ranks takes 12.7 ms:
// g2's block of 1/8 fits in the 2.684 ms (1.693 ms), g1 gets the fastest.
// SLOW: remark: grove-insert-collectives: bucket 0 (1 gradients, 1048576 bytes, 4 ranks at 1 Gbps): 2.684 ms of backward to overlap; dense all-reduce 12.703 ms; sends grbs 1/8 in 1.693 ms
// SLOW: remark: grove-insert-collectives: bucket 1 (1 gradients, 1048576 bytes, 4 ranks at 1 Gbps): 0.000 ms of backward to overlap; dense all-reduce 12.703 ms; sends grbs 1/256 in 0.169 ms (none fits in the backward: within 10% of the fastest)

// At 100 Gbps g2 goes dense (0.246 ms); g1, with nothing to hide behind,
// is latency-bound: 1/256 would take 0.120 ms, and 1/16 is within 10%.
// FAST: remark: grove-insert-collectives: bucket 0 (1 gradients, 1048576 bytes, 4 ranks at 100 Gbps): 2.684 ms of backward to overlap; dense all-reduce 0.246 ms; sends it dense
// FAST: remark: grove-insert-collectives: bucket 1 (1 gradients, 1048576 bytes, 4 ranks at 100 Gbps): 0.000 ms of backward to overlap; dense all-reduce 0.246 ms; sends grbs 1/16 in 0.128 ms (none fits in the backward: within 10% of the fastest)
// FAST: grove.all_reduce mean %{{.*}} : tensor<262144xf32>
// The dense bucket keeps no error-feedback residual; the compressed one
// does (residuals are numbered by compressed bucket).
// FASTSTATE: grove.param @collectives.bucket0.residual : tensor<262144xf32>
// FASTSTATE-NOT: .residual
// FASTSTATE: func.func

// Top-k gathers from every rank, so its time grows with the ranks: over 8
// ranks at 1 Gbps the smallest ratio that fits is 1/128, where GRBS's
// all-reduce of a block needs 1/8.
// TOPK: remark: grove-insert-collectives: bucket 0 (1 gradients, 1048576 bytes, 8 ranks at 1 Gbps): 2.684 ms of backward to overlap; dense all-reduce 14.960 ms; sends topk 1/128 in 2.508 ms
// GRBS8: remark: grove-insert-collectives: bucket 0 (1 gradients, 1048576 bytes, 8 ranks at 1 Gbps): 2.684 ms of backward to overlap; dense all-reduce 14.960 ms; sends grbs 1/8 in

// A list of compressors: the ladder is dense, then every compressor's
// ratios by ratio, the list's order breaking ties. At 4 Gbps g2's dense
// all-reduce (3.266 ms) does not fit in 2.684 ms; a bf16 cast (half the
// bytes plus the cast) does, and comes before GRBS 1/2, which grbs alone
// picks. g1, with nothing to hide behind, gets GRBS within 10% of its
// fastest, as before.
// GRBS4: bucket 0 ({{.*}}4 ranks at 4 Gbps): 2.684 ms of backward to overlap; dense all-reduce 3.266 ms; sends grbs 1/2 in 1.693 ms
// HALF: remark: grove-insert-collectives: bucket 0 (1 gradients, 1048576 bytes, 4 ranks at 4 Gbps): 2.684 ms of backward to overlap; dense all-reduce 3.266 ms; sends bf16 1/2 in 1.955 ms
// HALF: remark: grove-insert-collectives: bucket 1 (1 gradients, 1048576 bytes, 4 ranks at 4 Gbps): 0.000 ms of backward to overlap; dense all-reduce 3.266 ms; sends grbs 1/128 in 0.145 ms (none fits in the backward: within 10% of the fastest)
// Both buckets keep a residual: the cast's rounding is fed back too.
// HALF-DAG: grove.param @collectives.bucket0.residual : tensor<262144xf32>
// HALF-DAG: grove.param @collectives.bucket1.residual : tensor<262144xf32>
// HALF: grove.convert %{{.*}} : tensor<262144xf32> -> tensor<262144xbf16>
// HALF: grove.all_reduce sum %{{.*}} : tensor<262144xbf16>
// HALF: grove.random_block
