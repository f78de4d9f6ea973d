// REQUIRES: cuda-target
// RUN: grove-opt %s --grove-to-cuda > %t.mlir
// RUN: FileCheck %s < %t.mlir

// The transformer ops compile for sm_90 (grove-to-cuda's default chip):
// layer norm forward and its fused gradient, tiled causal attention and
// its gradient (host loops over key tiles launching kernels and cuBLAS
// calls), dropout, GELU's tanh form and an embedding with its gradient
// become kernels, and the gradient's grouping of ids is the CUDA twin of
// grove_rt_group_by_index on device buffers.
// CHECK-LABEL: llvm.func internal @_grove_tfm_train_step(
// CHECK-NOT: llvm.call @grove_rt_group_by_index(
// CHECK: llvm.call @grove_rt_cuda_group_by_index(
// CHECK-NOT: llvm.call @grove_rt_group_by_index(
// CHECK: gpu.binary @_grove_tfm_train_step_k0_map
module @tfm {
  grove.param @table : tensor<50x16xf32>
  grove.param @g : tensor<16xf32>
  grove.param @b : tensor<16xf32>
  func.func @train_step(%ids: tensor<?x8xi32> {grove.name = "ids"})
      -> (tensor<f32> {grove.name = "loss"}) {
    %l, %gr:3 = grove.value_and_grad [@table, @g, @b] {
      %t = grove.get_param @table : tensor<50x16xf32>
      %g = grove.get_param @g : tensor<16xf32>
      %b = grove.get_param @b : tensor<16xf32>
      %e = grove.embedding %t, %ids : (tensor<50x16xf32>, tensor<?x8xi32>) -> tensor<?x8x16xf32>
      %n = grove.layer_norm %e, %g, %b {epsilon = 1.0e-12 : f64}
          : (tensor<?x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<?x8x16xf32>
      %n4 = grove.reshape %n : tensor<?x8x16xf32> -> tensor<?x2x8x8xf32>
      %att = grove.attention %n4, %n4, %n4 {causal, key_tile = 4 : i64}
          : (tensor<?x2x8x8xf32>, tensor<?x2x8x8xf32>, tensor<?x2x8x8xf32>) -> tensor<?x2x8x8xf32>
      %n3 = grove.reshape %att : tensor<?x2x8x8xf32> -> tensor<?x8x16xf32>
      %dr = grove.dropout %n3 {rate = 0.1 : f64, stream = 0} : tensor<?x8x16xf32>
      %a = grove.gelu_tanh %dr : tensor<?x8x16xf32>
      %s = grove.reduce_sum %a {axes = array<i64: 0, 1, 2>} : tensor<?x8x16xf32> -> tensor<f32>
      grove.yield %s : tensor<f32>
    } : tensor<f32>, tensor<50x16xf32>, tensor<16xf32>, tensor<16xf32>
    grove.sgd [@table, @g, @b] (%gr#0, %gr#1, %gr#2) {lr = 0.1 : f64}
        : tensor<50x16xf32>, tensor<16xf32>, tensor<16xf32>
    return %l : tensor<f32>
  }
}
