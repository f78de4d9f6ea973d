// RUN: grove-opt %s --grove-fuse-split-attention | FileCheck %s

// grove.split_attention takes a radix of at most 16 (its lowering unrolls
// it): the pass fuses a radix-16 attention and leaves a radix-17 one in
// primitive ops (generated with test/Integration/split_attention.py's
// `unfused`, 2 channels per split, 4 inter channels, 2x2 images).

// CHECK-LABEL: func.func @radix16
// CHECK: grove.split_attention {{.*}} {cardinality = 1 : i64, epsilon = 1.000000e-05 : f64, radix = 16 : i64}
// CHECK-NOT: grove.softmax
// CHECK-LABEL: func.func @radix17
// CHECK-NOT: grove.split_attention
// CHECK: grove.softmax
// CHECK-NOT: grove.split_attention
module {
  func.func @radix16(%u: tensor<?x32x2x2xf32>, %p0: tensor<4x2x1x1xf32>, %p1: tensor<4xf32>, %p2: tensor<4xf32>, %p3: tensor<4xf32>, %p4: tensor<4xf32>, %p5: tensor<4xf32>, %p6: tensor<32x4x1x1xf32>, %p7: tensor<32xf32>) -> tensor<?x2x2x2xf32> {
    %s0 = grove.slice %u [0, 0, 0, 0] [-1, 2, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s1 = grove.slice %u [0, 2, 0, 0] [-1, 4, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s2 = grove.slice %u [0, 4, 0, 0] [-1, 6, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s3 = grove.slice %u [0, 6, 0, 0] [-1, 8, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s4 = grove.slice %u [0, 8, 0, 0] [-1, 10, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s5 = grove.slice %u [0, 10, 0, 0] [-1, 12, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s6 = grove.slice %u [0, 12, 0, 0] [-1, 14, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s7 = grove.slice %u [0, 14, 0, 0] [-1, 16, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s8 = grove.slice %u [0, 16, 0, 0] [-1, 18, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s9 = grove.slice %u [0, 18, 0, 0] [-1, 20, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s10 = grove.slice %u [0, 20, 0, 0] [-1, 22, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s11 = grove.slice %u [0, 22, 0, 0] [-1, 24, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s12 = grove.slice %u [0, 24, 0, 0] [-1, 26, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s13 = grove.slice %u [0, 26, 0, 0] [-1, 28, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s14 = grove.slice %u [0, 28, 0, 0] [-1, 30, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %s15 = grove.slice %u [0, 30, 0, 0] [-1, 32, 2, 2] [1, 1, 1, 1] : tensor<?x32x2x2xf32> -> tensor<?x2x2x2xf32>
    %sum1 = grove.add %s0, %s1 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum2 = grove.add %sum1, %s2 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum3 = grove.add %sum2, %s3 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum4 = grove.add %sum3, %s4 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum5 = grove.add %sum4, %s5 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum6 = grove.add %sum5, %s6 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum7 = grove.add %sum6, %s7 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum8 = grove.add %sum7, %s8 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum9 = grove.add %sum8, %s9 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum10 = grove.add %sum9, %s10 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum11 = grove.add %sum10, %s11 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum12 = grove.add %sum11, %s12 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum13 = grove.add %sum12, %s13 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum14 = grove.add %sum13, %s14 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum15 = grove.add %sum14, %s15 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %gap = grove.global_avg_pool %sum15 : (tensor<?x2x2x2xf32>) -> tensor<?x2x1x1xf32>
    %fc1 = grove.conv2d %gap, %p0, %p1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x2x1x1xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<?x4x1x1xf32>
    %bn = grove.batch_norm %fc1, %p2, %p3, %p4, %p5 {epsilon = 1.0e-05 : f64} : (tensor<?x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x1x1xf32>
    %relu = grove.relu %bn : tensor<?x4x1x1xf32>
    %fc2 = grove.conv2d %relu, %p6, %p7 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<32x4x1x1xf32>, tensor<32xf32>) -> tensor<?x32x1x1xf32>
    %v = grove.reshape %fc2 : tensor<?x32x1x1xf32> -> tensor<?x1x16x2xf32>
    %vt = grove.transpose %v [0, 2, 1, 3] : tensor<?x1x16x2xf32> -> tensor<?x16x1x2xf32>
    %sm = grove.softmax %vt {axis = 1 : i64} : tensor<?x16x1x2xf32>
    %att = grove.reshape %sm : tensor<?x16x1x2xf32> -> tensor<?x32x1x1xf32>
    %a0 = grove.slice %att [0, 0, 0, 0] [-1, 2, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m0 = grove.mul %a0, %s0 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a1 = grove.slice %att [0, 2, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m1 = grove.mul %a1, %s1 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a2 = grove.slice %att [0, 4, 0, 0] [-1, 6, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m2 = grove.mul %a2, %s2 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a3 = grove.slice %att [0, 6, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m3 = grove.mul %a3, %s3 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a4 = grove.slice %att [0, 8, 0, 0] [-1, 10, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m4 = grove.mul %a4, %s4 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a5 = grove.slice %att [0, 10, 0, 0] [-1, 12, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m5 = grove.mul %a5, %s5 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a6 = grove.slice %att [0, 12, 0, 0] [-1, 14, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m6 = grove.mul %a6, %s6 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a7 = grove.slice %att [0, 14, 0, 0] [-1, 16, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m7 = grove.mul %a7, %s7 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a8 = grove.slice %att [0, 16, 0, 0] [-1, 18, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m8 = grove.mul %a8, %s8 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a9 = grove.slice %att [0, 18, 0, 0] [-1, 20, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m9 = grove.mul %a9, %s9 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a10 = grove.slice %att [0, 20, 0, 0] [-1, 22, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m10 = grove.mul %a10, %s10 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a11 = grove.slice %att [0, 22, 0, 0] [-1, 24, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m11 = grove.mul %a11, %s11 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a12 = grove.slice %att [0, 24, 0, 0] [-1, 26, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m12 = grove.mul %a12, %s12 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a13 = grove.slice %att [0, 26, 0, 0] [-1, 28, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m13 = grove.mul %a13, %s13 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a14 = grove.slice %att [0, 28, 0, 0] [-1, 30, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m14 = grove.mul %a14, %s14 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a15 = grove.slice %att [0, 30, 0, 0] [-1, 32, 1, 1] [1, 1, 1, 1] : tensor<?x32x1x1xf32> -> tensor<?x2x1x1xf32>
    %m15 = grove.mul %a15, %s15 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o1 = grove.add %m0, %m1 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o2 = grove.add %o1, %m2 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o3 = grove.add %o2, %m3 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o4 = grove.add %o3, %m4 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o5 = grove.add %o4, %m5 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o6 = grove.add %o5, %m6 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o7 = grove.add %o6, %m7 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o8 = grove.add %o7, %m8 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o9 = grove.add %o8, %m9 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o10 = grove.add %o9, %m10 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o11 = grove.add %o10, %m11 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o12 = grove.add %o11, %m12 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o13 = grove.add %o12, %m13 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o14 = grove.add %o13, %m14 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %res = grove.add %o14, %m15 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    return %res : tensor<?x2x2x2xf32>
  }
  func.func @radix17(%u: tensor<?x34x2x2xf32>, %p0: tensor<4x2x1x1xf32>, %p1: tensor<4xf32>, %p2: tensor<4xf32>, %p3: tensor<4xf32>, %p4: tensor<4xf32>, %p5: tensor<4xf32>, %p6: tensor<34x4x1x1xf32>, %p7: tensor<34xf32>) -> tensor<?x2x2x2xf32> {
    %s0 = grove.slice %u [0, 0, 0, 0] [-1, 2, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s1 = grove.slice %u [0, 2, 0, 0] [-1, 4, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s2 = grove.slice %u [0, 4, 0, 0] [-1, 6, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s3 = grove.slice %u [0, 6, 0, 0] [-1, 8, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s4 = grove.slice %u [0, 8, 0, 0] [-1, 10, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s5 = grove.slice %u [0, 10, 0, 0] [-1, 12, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s6 = grove.slice %u [0, 12, 0, 0] [-1, 14, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s7 = grove.slice %u [0, 14, 0, 0] [-1, 16, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s8 = grove.slice %u [0, 16, 0, 0] [-1, 18, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s9 = grove.slice %u [0, 18, 0, 0] [-1, 20, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s10 = grove.slice %u [0, 20, 0, 0] [-1, 22, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s11 = grove.slice %u [0, 22, 0, 0] [-1, 24, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s12 = grove.slice %u [0, 24, 0, 0] [-1, 26, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s13 = grove.slice %u [0, 26, 0, 0] [-1, 28, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s14 = grove.slice %u [0, 28, 0, 0] [-1, 30, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s15 = grove.slice %u [0, 30, 0, 0] [-1, 32, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %s16 = grove.slice %u [0, 32, 0, 0] [-1, 34, 2, 2] [1, 1, 1, 1] : tensor<?x34x2x2xf32> -> tensor<?x2x2x2xf32>
    %sum1 = grove.add %s0, %s1 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum2 = grove.add %sum1, %s2 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum3 = grove.add %sum2, %s3 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum4 = grove.add %sum3, %s4 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum5 = grove.add %sum4, %s5 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum6 = grove.add %sum5, %s6 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum7 = grove.add %sum6, %s7 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum8 = grove.add %sum7, %s8 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum9 = grove.add %sum8, %s9 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum10 = grove.add %sum9, %s10 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum11 = grove.add %sum10, %s11 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum12 = grove.add %sum11, %s12 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum13 = grove.add %sum12, %s13 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum14 = grove.add %sum13, %s14 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum15 = grove.add %sum14, %s15 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %sum16 = grove.add %sum15, %s16 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %gap = grove.global_avg_pool %sum16 : (tensor<?x2x2x2xf32>) -> tensor<?x2x1x1xf32>
    %fc1 = grove.conv2d %gap, %p0, %p1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x2x1x1xf32>, tensor<4x2x1x1xf32>, tensor<4xf32>) -> tensor<?x4x1x1xf32>
    %bn = grove.batch_norm %fc1, %p2, %p3, %p4, %p5 {epsilon = 1.0e-05 : f64} : (tensor<?x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x1x1xf32>
    %relu = grove.relu %bn : tensor<?x4x1x1xf32>
    %fc2 = grove.conv2d %relu, %p6, %p7 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<34x4x1x1xf32>, tensor<34xf32>) -> tensor<?x34x1x1xf32>
    %v = grove.reshape %fc2 : tensor<?x34x1x1xf32> -> tensor<?x1x17x2xf32>
    %vt = grove.transpose %v [0, 2, 1, 3] : tensor<?x1x17x2xf32> -> tensor<?x17x1x2xf32>
    %sm = grove.softmax %vt {axis = 1 : i64} : tensor<?x17x1x2xf32>
    %att = grove.reshape %sm : tensor<?x17x1x2xf32> -> tensor<?x34x1x1xf32>
    %a0 = grove.slice %att [0, 0, 0, 0] [-1, 2, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m0 = grove.mul %a0, %s0 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a1 = grove.slice %att [0, 2, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m1 = grove.mul %a1, %s1 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a2 = grove.slice %att [0, 4, 0, 0] [-1, 6, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m2 = grove.mul %a2, %s2 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a3 = grove.slice %att [0, 6, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m3 = grove.mul %a3, %s3 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a4 = grove.slice %att [0, 8, 0, 0] [-1, 10, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m4 = grove.mul %a4, %s4 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a5 = grove.slice %att [0, 10, 0, 0] [-1, 12, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m5 = grove.mul %a5, %s5 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a6 = grove.slice %att [0, 12, 0, 0] [-1, 14, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m6 = grove.mul %a6, %s6 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a7 = grove.slice %att [0, 14, 0, 0] [-1, 16, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m7 = grove.mul %a7, %s7 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a8 = grove.slice %att [0, 16, 0, 0] [-1, 18, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m8 = grove.mul %a8, %s8 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a9 = grove.slice %att [0, 18, 0, 0] [-1, 20, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m9 = grove.mul %a9, %s9 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a10 = grove.slice %att [0, 20, 0, 0] [-1, 22, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m10 = grove.mul %a10, %s10 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a11 = grove.slice %att [0, 22, 0, 0] [-1, 24, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m11 = grove.mul %a11, %s11 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a12 = grove.slice %att [0, 24, 0, 0] [-1, 26, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m12 = grove.mul %a12, %s12 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a13 = grove.slice %att [0, 26, 0, 0] [-1, 28, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m13 = grove.mul %a13, %s13 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a14 = grove.slice %att [0, 28, 0, 0] [-1, 30, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m14 = grove.mul %a14, %s14 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a15 = grove.slice %att [0, 30, 0, 0] [-1, 32, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m15 = grove.mul %a15, %s15 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %a16 = grove.slice %att [0, 32, 0, 0] [-1, 34, 1, 1] [1, 1, 1, 1] : tensor<?x34x1x1xf32> -> tensor<?x2x1x1xf32>
    %m16 = grove.mul %a16, %s16 : (tensor<?x2x1x1xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o1 = grove.add %m0, %m1 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o2 = grove.add %o1, %m2 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o3 = grove.add %o2, %m3 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o4 = grove.add %o3, %m4 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o5 = grove.add %o4, %m5 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o6 = grove.add %o5, %m6 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o7 = grove.add %o6, %m7 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o8 = grove.add %o7, %m8 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o9 = grove.add %o8, %m9 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o10 = grove.add %o9, %m10 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o11 = grove.add %o10, %m11 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o12 = grove.add %o11, %m12 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o13 = grove.add %o12, %m13 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o14 = grove.add %o13, %m14 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %o15 = grove.add %o14, %m15 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    %res = grove.add %o15, %m16 : (tensor<?x2x2x2xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x2x2xf32>
    return %res : tensor<?x2x2x2xf32>
  }
}
