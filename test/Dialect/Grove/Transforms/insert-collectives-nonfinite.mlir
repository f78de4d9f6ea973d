// RUN: grove-opt %s --grove-insert-collectives="compressor=topk ratio=4 error=feedback" | FileCheck %s --check-prefix=TOPK
// RUN: grove-opt %s --grove-insert-collectives="compressor=grbs ratio=4 error=feedback" | FileCheck %s --check-prefix=EF
// RUN: grove-opt %s --grove-insert-collectives="compressor=grbs ratio=4" | FileCheck %s --check-prefix=NOEF

// With skip_nonfinite, error feedback keeps the previous residual where
// this rank's e = g + residual is not finite (e * 0 sums to NaN).
grove.param @v : tensor<8xf32>
func.func @nonfinite(%g: tensor<8xf32>) {
  grove.sgd [@v] (%g) {lr = 0.1 : f64, skip_nonfinite} : tensor<8xf32>
  return
}
// TOPK-LABEL: func.func @nonfinite
// TOPK: %[[R:.*]] = grove.get_param @collectives.bucket0.residual : tensor<8xf32>
// TOPK: %[[E:.*]] = grove.add %{{.*}}, %[[R]] : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// TOPK: %[[NEXT:.*]] = grove.sub %[[E]], %{{.*}} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// TOPK: %[[Z:.*]] = grove.mul %[[E]], %{{.*}} : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
// TOPK: %[[P:.*]] = grove.reduce_sum %[[Z]] {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
// TOPK: %[[P1:.*]] = grove.add %[[P]], %{{.*}} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// TOPK: %[[OK:.*]] = grove.step %[[P1]] : tensor<f32>
// TOPK: %[[KEPT:.*]] = grove.select %[[OK]], %[[NEXT]], %[[R]] : (tensor<f32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
// TOPK: grove.set_param @collectives.bucket0.residual = %[[KEPT]] : tensor<8xf32>
// EF-LABEL: func.func @nonfinite
// EF: grove.select
// NOEF-LABEL: func.func @nonfinite
// NOEF-NOT: grove.select
