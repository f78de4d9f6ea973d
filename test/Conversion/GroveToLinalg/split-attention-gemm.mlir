// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg=split-attention-gemm | FileCheck %s
// RUN: grove-opt %s -split-input-file --convert-grove-to-linalg | FileCheck %s --check-prefix=LOOPS
// RUN: grove-opt %s -split-input-file --grove-to-host | FileCheck %s --check-prefix=HOST

// convert-grove-to-linalg{split-attention-gemm} (SplitAttention.cpp): each of
// the two FCs of a one-group f32 grove.split_attention is a linalg.matmul
// (a GEMM library call on the host) when its weight has at most 64Ki
// elements, and otherwise when the batch is above 1: chosen by an scf.if on
// a dynamic batch, at compile time on a static one. Larger weights at batch
// 1, several cardinal groups and f16/bf16 keep the generic loops, as does
// every shape without the option (what grove-to-cuda runs). grove-to-host
// sets it.

// A dynamic batch and weights above 64Ki elements (128Ki and 256Ki): both
// forms of each FC, picked at run time.
// CHECK-LABEL: func.func @dynamic_batch(
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %c0
// CHECK: %[[MANY:.*]] = arith.cmpi sgt, %[[N]], %c1
// CHECK: scf.if %[[MANY]] -> (tensor<?x1x256xf32>) {
// CHECK:   linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x512xf32>, tensor<256x512xf32>)
// CHECK: } else {
// CHECK-NOT: linalg.matmul
// CHECK:   linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x1x512xf32>, tensor<1x256x512xf32>)
// CHECK: }
// CHECK: scf.if %[[MANY]] -> (tensor<?x1x2x512xf32>) {
// CHECK:   linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x256xf32>, tensor<1024x256xf32>)
// CHECK: } else {
// CHECK-NOT: linalg.matmul
// CHECK: }
// LOOPS-LABEL: func.func @dynamic_batch(
// LOOPS-NOT: scf.if
// LOOPS-NOT: linalg.matmul
// LOOPS: return
// The host pipeline: both FCs end as runtime GEMM calls behind one test.
// HOST-LABEL: llvm.func internal @_grove_model_dynamic_batch(
// HOST: llvm.cond_br %[[MANY:[0-9]+]], ^bb
// HOST: llvm.call @grove_rt_matmul_f32(
// HOST: llvm.cond_br %[[MANY]], ^bb
// HOST: llvm.call @grove_rt_matmul_f32(
func.func @dynamic_batch(%u: tensor<?x1024x1x1xf32>, %w1: tensor<256x512x1x1xf32>, %b1: tensor<256xf32>, %sc: tensor<256xf32>, %sh: tensor<256xf32>, %mu: tensor<256xf32>, %var: tensor<256xf32>, %w2: tensor<1024x256x1x1xf32>, %b2: tensor<1024xf32>) -> tensor<?x512x1x1xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<?x1024x1x1xf32>, tensor<256x512x1x1xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<1024x256x1x1xf32>, tensor<1024xf32>) -> tensor<?x512x1x1xf32>
  return %0 : tensor<?x512x1x1xf32>
}

// -----

// fc1's weight has 64Ki elements: a matmul at every batch; fc2's 128Ki: the
// run-time choice.
// CHECK-LABEL: func.func @one_small_fc(
// CHECK-NOT: scf.if
// CHECK: linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x256xf32>, tensor<256x256xf32>)
// CHECK-NOT: linalg.generic {{.*}} tensor<1x256x256xf32>
// CHECK: scf.if %{{.*}} -> (tensor<?x1x2x256xf32>) {
// CHECK:   linalg.matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?x256xf32>, tensor<512x256xf32>)
// CHECK: } else {
// CHECK:   linalg.generic
// CHECK: }
func.func @one_small_fc(%u: tensor<?x512x1x1xf32>, %w1: tensor<256x256x1x1xf32>, %b1: tensor<256xf32>, %sc: tensor<256xf32>, %sh: tensor<256xf32>, %mu: tensor<256xf32>, %var: tensor<256xf32>, %w2: tensor<512x256x1x1xf32>, %b2: tensor<512xf32>) -> tensor<?x256x1x1xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<?x512x1x1xf32>, tensor<256x256x1x1xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<512x256x1x1xf32>, tensor<512xf32>) -> tensor<?x256x1x1xf32>
  return %0 : tensor<?x256x1x1xf32>
}

// -----

// Small weights: matmuls at any batch, no branch.
// CHECK-LABEL: func.func @small_dynamic(
// CHECK-NOT: scf.if
// CHECK: linalg.matmul {{.*}} -> tensor<?x8xf32>
// CHECK-NOT: scf.if
// CHECK: linalg.matmul {{.*}} -> tensor<?x8xf32>
// CHECK: return
// Without the option (grove-to-cuda), loops.
// LOOPS-LABEL: func.func @small_dynamic(
// LOOPS-NOT: linalg.matmul
// LOOPS: return
func.func @small_dynamic(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %sc: tensor<8xf32>, %sh: tensor<8xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<?x8x3x3xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x4x3x3xf32>
  return %0 : tensor<?x4x3x3xf32>
}

// -----

// A static batch above 1: matmuls only, no branch.
// CHECK-LABEL: func.func @batch4(
// CHECK-NOT: scf.if
// CHECK: linalg.matmul {{.*}} -> tensor<4x256xf32>
// CHECK-NOT: scf.if
// CHECK: linalg.matmul {{.*}} -> tensor<4x1024xf32>
func.func @batch4(%u: tensor<4x1024x1x1xf32>, %w1: tensor<256x512x1x1xf32>, %b1: tensor<256xf32>, %sc: tensor<256xf32>, %sh: tensor<256xf32>, %mu: tensor<256xf32>, %var: tensor<256xf32>, %w2: tensor<1024x256x1x1xf32>, %b2: tensor<1024xf32>) -> tensor<4x512x1x1xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<4x1024x1x1xf32>, tensor<256x512x1x1xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<1024x256x1x1xf32>, tensor<1024xf32>) -> tensor<4x512x1x1xf32>
  return %0 : tensor<4x512x1x1xf32>
}

// -----

// Batch 1 with large weights: matrix-vector products stay loops.
// CHECK-LABEL: func.func @batch1(
// CHECK-NOT: linalg.matmul
// CHECK-NOT: scf.if
// CHECK: return
func.func @batch1(%u: tensor<1x1024x1x1xf32>, %w1: tensor<256x512x1x1xf32>, %b1: tensor<256xf32>, %sc: tensor<256xf32>, %sh: tensor<256xf32>, %mu: tensor<256xf32>, %var: tensor<256xf32>, %w2: tensor<1024x256x1x1xf32>, %b2: tensor<1024xf32>) -> tensor<1x512x1x1xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<1x1024x1x1xf32>, tensor<256x512x1x1xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<1024x256x1x1xf32>, tensor<1024xf32>) -> tensor<1x512x1x1xf32>
  return %0 : tensor<1x512x1x1xf32>
}

// -----

// Batch 1 with small weights: the library's matrix-vector products.
// CHECK-LABEL: func.func @batch1_small(
// CHECK-NOT: scf.if
// CHECK: linalg.matmul {{.*}} -> tensor<1x8xf32>
// CHECK: linalg.matmul {{.*}} -> tensor<1x8xf32>
// LOOPS-LABEL: func.func @batch1_small(
// LOOPS-NOT: linalg.matmul
// LOOPS: return
func.func @batch1_small(%u: tensor<1x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %sc: tensor<8xf32>, %sh: tensor<8xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<1x4x3x3xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<1x8x3x3xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}

// -----

// Two cardinal groups: grouped FCs, loops.
// CHECK-LABEL: func.func @two_groups(
// CHECK-NOT: linalg.matmul
// CHECK-NOT: scf.if
// CHECK: return
func.func @two_groups(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x2x1x1xf32>, %b1: tensor<8xf32>, %sc: tensor<8xf32>, %sh: tensor<8xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x4x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 2 : i64, cardinality = 2 : i64, epsilon = 1.0e-05 : f64} : (tensor<?x8x3x3xf32>, tensor<8x2x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x4x3x3xf32>
  return %0 : tensor<?x4x3x3xf32>
}

// -----

// bf16: the FCs accumulate in f32 from bf16 weights; the library is f32 only.
// CHECK-LABEL: func.func @bf16(
// CHECK-NOT: linalg.matmul
// CHECK-NOT: scf.if
// CHECK: return
func.func @bf16(%u: tensor<?x8x3x3xbf16>, %w1: tensor<8x4x1x1xbf16>, %b1: tensor<8xbf16>, %sc: tensor<8xbf16>, %sh: tensor<8xbf16>, %mu: tensor<8xbf16>, %var: tensor<8xbf16>, %w2: tensor<8x8x1x1xbf16>, %b2: tensor<8xbf16>) -> tensor<?x4x3x3xbf16> {
  %0 = grove.split_attention %u, %w1, %b1, %sc, %sh, %mu, %var, %w2, %b2 {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64} : (tensor<?x8x3x3xbf16>, tensor<8x4x1x1xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>, tensor<8x8x1x1xbf16>, tensor<8xbf16>) -> tensor<?x4x3x3xbf16>
  return %0 : tensor<?x4x3x3xbf16>
}
