// REQUIRES: cuda-target
// RUN: grove-opt %s --grove-to-cuda | FileCheck %s

// grove.split_attention through grove-to-cuda (ResNeSt-50's last block
// shape, dynamic batch): six kernels and no library call. U (the entry's
// first buffer) is read by two of them only - the pooled sum and the
// weighted sum; in between, fc1, BN + ReLU, fc2 and the rSoftMax are one
// kernel each, and the zero fills of the three reductions are folded into
// their kernels (convert-linalg-to-gpu-launch). Numerics:
// test/Integration/split_attention.py on a GPU.
// CHECK-LABEL: llvm.func internal @_grove_model_sa(
// CHECK-SAME: %[[UPTR:[a-z0-9]+]]: !llvm.ptr, %[[UDATA:[a-z0-9]+]]: !llvm.ptr,
// CHECK-NOT: grove_rt_cuda_gemm
// CHECK: gpu.launch_func {{.*}} args(%[[UPTR]] : !llvm.ptr, %[[UDATA]] : !llvm.ptr,
// CHECK-NOT: %[[UDATA]] :
// CHECK-COUNT-4: gpu.launch_func
// CHECK-NOT: %[[UDATA]] :
// CHECK: gpu.launch_func {{.*}} args(%[[UPTR]] : !llvm.ptr, %[[UDATA]] : !llvm.ptr,
// CHECK-NOT: gpu.launch_func
// CHECK-NOT: grove_rt_cuda_gemm
// CHECK: llvm.return
func.func @sa(%u: tensor<?x1024x7x7xf32>, %w1: tensor<256x512x1x1xf32>, %b1: tensor<256xf32>, %sc: tensor<256xf32>, %sh: tensor<256xf32>, %mu: tensor<256xf32>, %var: tensor<256xf32>, %w2: tensor<1024x256x1x1xf32>, %b2: tensor<1024xf32>) -> tensor<?x512x7x7xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<?x1024x7x7xf32>, tensor<256x512x1x1xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<1024x256x1x1xf32>, tensor<1024xf32>) -> tensor<?x512x7x7xf32>
  return %0 : tensor<?x512x7x7xf32>
}
