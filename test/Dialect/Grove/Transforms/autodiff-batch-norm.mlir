// RUN: grove-opt %s --grove-autodiff | FileCheck %s
// RUN: grove-opt %s --grove-autodiff --grove-expand-training-ops --cse | FileCheck %s --check-prefix=CSE

// batch_norm_training inside grove.value_and_grad: it stays in the forward
// (so its running statistics are written once), and its VJP recomputes
// the batch statistics, which CSE merges with the forward's after
// expansion: one mean of the input remains.
// CHECK-LABEL: func.func @step
// CHECK: %[[Y:.*]] = grove.batch_norm_training
// CHECK-NOT: grove.value_and_grad
// CHECK: grove.reduce_mean
// CHECK: return
// CSE-LABEL: func.func @step
// CSE-SAME: (%[[X:.*]]: tensor<4x3x2xf32>)
// CSE-COUNT-1: grove.reduce_mean %[[X]]
// CSE-NOT: grove.reduce_mean %[[X]]
// CSE: grove.set_param @rm
// CSE: grove.set_param @rv
// CSE: return
module {
  grove.param @s : tensor<3xf32>
  grove.param @b : tensor<3xf32>
  grove.param @rm : tensor<3xf32> = 0.0 : f32
  grove.param @rv : tensor<3xf32> = 1.0 : f32
  func.func @step(%x: tensor<4x3x2xf32>) -> (tensor<f32>, tensor<3xf32>, tensor<3xf32>) {
    %l, %gs, %gb = grove.value_and_grad [@s, @b] {
      %s = grove.get_param @s : tensor<3xf32>
      %b = grove.get_param @b : tensor<3xf32>
      %y = grove.batch_norm_training %x, %s, %b {running_mean = @rm, running_var = @rv} : (tensor<4x3x2xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x2xf32>
      %t = grove.tanh %y : tensor<4x3x2xf32>
      %l = grove.reduce_sum %t {axes = array<i64: 0, 1, 2>} : tensor<4x3x2xf32> -> tensor<f32>
      grove.yield %l : tensor<f32>
    } : tensor<f32>, tensor<3xf32>, tensor<3xf32>
    return %l, %gs, %gb : tensor<f32>, tensor<3xf32>, tensor<3xf32>
  }
}
