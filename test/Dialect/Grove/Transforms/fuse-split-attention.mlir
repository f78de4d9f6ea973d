// RUN: grove-opt %s -split-input-file --grove-fuse-split-attention | FileCheck %s

// grove-fuse-split-attention (FuseSplitAttention.cpp): the attention part of
// ResNeSt's SplAtConv2d, as a frontend emits it op by op, becomes one
// grove.split_attention, whatever the operand order of the adds and
// multiplications and the association of the sums; anything else (another
// axis, another activation, another radix or cardinality somewhere, an
// intermediate used outside the pattern, splits that do not tile U, an FC
// that is not 1x1/unstrided) is left exactly as it is. The matcher checks
// structure, so the cases below are small (C = 4, I = 8, H = W = 3) and
// differ from the positive form in one point each.

// Radix 2, cardinality 1, exactly as a frontend emits it
// (test/Integration/split_attention.py): one op with U, the two FCs' weights
// and biases and the BN's statistics in operand order, the radix and
// cardinality counted from the pattern, the BN's epsilon; every primitive op
// is gone.
// CHECK-LABEL: func.func @radix2_cardinality1
// CHECK-SAME: (%[[U:[^:]*]]: tensor<?x8x3x3xf32>, %[[W1:[^:]*]]: tensor<8x4x1x1xf32>, %[[B1:[^:]*]]: tensor<8xf32>, %[[SCALE:[^:]*]]: tensor<8xf32>, %[[SHIFT:[^:]*]]: tensor<8xf32>, %[[MEAN:[^:]*]]: tensor<8xf32>, %[[VAR:[^:]*]]: tensor<8xf32>, %[[W2:[^:]*]]: tensor<8x8x1x1xf32>, %[[B2:[^:]*]]: tensor<8xf32>)
// CHECK-NOT: grove.
// CHECK: %[[R:.*]] = grove.split_attention %[[U]], %[[W1]], %[[B1]], %[[SCALE]], %[[SHIFT]], %[[MEAN]], %[[VAR]], %[[W2]], %[[B2]] {cardinality = 1 : i64, epsilon = 1.000000e-05 : f64, radix = 2 : i64} : (tensor<?x8x3x3xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x4x3x3xf32>
// CHECK-NOT: grove.
// CHECK: return %[[R]] : tensor<?x4x3x3xf32>
func.func @radix2_cardinality1(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// As torch.onnx.export writes it in eval mode: the MLP without its batch
// norm (folded into fc1's weight and bias), and the pooled sum starting
// from Python's 0 (sum(splits) is 0 + s0 + s1, a scalar zero added).
// Fused with an exact identity norm (scale 1, shift 0, mean 0, variance
// 1, epsilon 0); the added zero goes with the rest.
// CHECK-LABEL: func.func @radix2_bn_folded
// CHECK-SAME: (%[[U:[^:]*]]: tensor<?x8x3x3xf32>, %[[W1:[^:]*]]: tensor<8x4x1x1xf32>, %[[B1:[^:]*]]: tensor<8xf32>, %[[W2:[^:]*]]: tensor<8x8x1x1xf32>, %[[B2:[^:]*]]: tensor<8xf32>)
// CHECK-NOT: tensor<f32>
// CHECK-DAG: %[[ONE:.*]] = grove.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[ZERO:.*]] = grove.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: %[[R:.*]] = grove.split_attention %[[U]], %[[W1]], %[[B1]], %[[ONE]], %[[ZERO]], %[[ZERO]], %[[ONE]], %[[W2]], %[[B2]] {cardinality = 1 : i64, epsilon = 0.000000e+00 : f64, radix = 2 : i64}
// CHECK-NOT: grove.
// CHECK: return %[[R]] : tensor<?x4x3x3xf32>
func.func @radix2_bn_folded(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %zero = grove.constant dense<0.0> : tensor<f32>
  %sum0 = grove.add %s0, %zero : (tensor<?x4x3x3xf32>, tensor<f32>) -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %sum0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %fc1 : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %s0, %a0 : (tensor<?x4x3x3xf32>, tensor<?x4x1x1xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// Radix 4, cardinality 2 (the view is B x 2 x 4 x 2), with everything a
// frontend may permute: slices emitted out of order, the pooled sum
// s3 + (s1 + (s2 + s0)), the weighted sum (m2 + m0) + (m3 + m1), two of the
// products written U-slice first, the arguments in another order (operands
// are matched by what they are, not where they come from), and a different
// epsilon.
// CHECK-LABEL: func.func @radix4_cardinality2_shuffled
// CHECK-SAME: (%[[VAR:[^:]*]]: tensor<8xf32>, %[[U:[^:]*]]: tensor<?x16x3x3xf32>, %[[W1:[^:]*]]: tensor<8x2x1x1xf32>, %[[B1:[^:]*]]: tensor<8xf32>, %[[SCALE:[^:]*]]: tensor<8xf32>, %[[SHIFT:[^:]*]]: tensor<8xf32>, %[[MEAN:[^:]*]]: tensor<8xf32>, %[[W2:[^:]*]]: tensor<16x4x1x1xf32>, %[[B2:[^:]*]]: tensor<16xf32>)
// CHECK-NOT: grove.
// CHECK: %[[R:.*]] = grove.split_attention %[[U]], %[[W1]], %[[B1]], %[[SCALE]], %[[SHIFT]], %[[MEAN]], %[[VAR]], %[[W2]], %[[B2]] {cardinality = 2 : i64, epsilon = 1.000000e-03 : f64, radix = 4 : i64} : (tensor<?x16x3x3xf32>, tensor<8x2x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<16x4x1x1xf32>, tensor<16xf32>) -> tensor<?x4x3x3xf32>
// CHECK-NOT: grove.
// CHECK: return %[[R]] : tensor<?x4x3x3xf32>
func.func @radix4_cardinality2_shuffled(%var: tensor<8xf32>, %u: tensor<?x16x3x3xf32>, %w1: tensor<8x2x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %w2: tensor<16x4x1x1xf32>, %b2: tensor<16xf32>) -> tensor<?x4x3x3xf32> {
  %s2 = grove.slice %u [0, 8, 0, 0] [-1, 12, 3, 3] [1, 1, 1, 1] : tensor<?x16x3x3xf32> -> tensor<?x4x3x3xf32>
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x16x3x3xf32> -> tensor<?x4x3x3xf32>
  %s3 = grove.slice %u [0, 12, 0, 0] [-1, 16, 3, 3] [1, 1, 1, 1] : tensor<?x16x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x16x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s2, %s0 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %sum2 = grove.add %s1, %sum1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %sum3 = grove.add %s3, %sum2 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum3 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x2x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-03 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<16x4x1x1xf32>, tensor<16xf32>) -> tensor<?x16x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x16x1x1xf32> -> tensor<?x2x4x2xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x2x4x2xf32> -> tensor<?x4x2x2xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x4x2x2xf32>
  %att = grove.reshape %softmax : tensor<?x4x2x2xf32> -> tensor<?x16x1x1xf32>
  %a2 = grove.slice %att [0, 8, 0, 0] [-1, 12, 1, 1] [1, 1, 1, 1] : tensor<?x16x1x1xf32> -> tensor<?x4x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x16x1x1xf32> -> tensor<?x4x1x1xf32>
  %a3 = grove.slice %att [0, 12, 0, 0] [-1, 16, 1, 1] [1, 1, 1, 1] : tensor<?x16x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x16x1x1xf32> -> tensor<?x4x1x1xf32>
  %m2 = grove.mul %a2, %s2 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m3 = grove.mul %s3, %a3 : (tensor<?x4x3x3xf32>, tensor<?x4x1x1xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %s1, %a1 : (tensor<?x4x3x3xf32>, tensor<?x4x1x1xf32>) -> tensor<?x4x3x3xf32>
  %o1 = grove.add %m2, %m0 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %o2 = grove.add %m3, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %o1, %o2 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// The fused op replaces only the final sum: its other users now use the
// fused op.
// CHECK-LABEL: func.func @radix2_result_used
// CHECK-SAME: (%[[U:[^:]*]]: tensor<?x8x3x3xf32>, %[[W1:[^:]*]]: tensor<8x4x1x1xf32>, %[[B1:[^:]*]]: tensor<8xf32>, %[[SCALE:[^:]*]]: tensor<8xf32>, %[[SHIFT:[^:]*]]: tensor<8xf32>, %[[MEAN:[^:]*]]: tensor<8xf32>, %[[VAR:[^:]*]]: tensor<8xf32>, %[[W2:[^:]*]]: tensor<8x8x1x1xf32>, %[[B2:[^:]*]]: tensor<8xf32>)
// CHECK-NOT: grove.
// CHECK: %[[R:.*]] = grove.split_attention %[[U]], %[[W1]], %[[B1]], %[[SCALE]], %[[SHIFT]], %[[MEAN]], %[[VAR]], %[[W2]], %[[B2]] {cardinality = 1 : i64, epsilon = 1.000000e-05 : f64, radix = 2 : i64} : (tensor<?x8x3x3xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x4x3x3xf32>
// CHECK-NEXT: %[[Y:.*]] = grove.relu %[[R]] : tensor<?x4x3x3xf32>
// CHECK-NEXT: return %[[R]], %[[Y]] : tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>
func.func @radix2_result_used(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %relu_out = grove.relu %res : tensor<?x4x3x3xf32>
  return %res, %relu_out : tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>
}

// -----

// Radix 1: sigmoid(MLP(global_avg_pool(U))) * U, attention first.
// CHECK-LABEL: func.func @radix1_sigmoid
// CHECK-SAME: (%[[U:[^:]*]]: tensor<?x4x3x3xf32>, %[[W1:[^:]*]]: tensor<8x4x1x1xf32>, %[[B1:[^:]*]]: tensor<8xf32>, %[[SCALE:[^:]*]]: tensor<8xf32>, %[[SHIFT:[^:]*]]: tensor<8xf32>, %[[MEAN:[^:]*]]: tensor<8xf32>, %[[VAR:[^:]*]]: tensor<8xf32>, %[[W2:[^:]*]]: tensor<4x8x1x1xf32>, %[[B2:[^:]*]]: tensor<4xf32>)
// CHECK-NOT: grove.
// CHECK: %[[R:.*]] = grove.split_attention %[[U]], %[[W1]], %[[B1]], %[[SCALE]], %[[SHIFT]], %[[MEAN]], %[[VAR]], %[[W2]], %[[B2]] {cardinality = 1 : i64, epsilon = 1.000000e-05 : f64, radix = 1 : i64} : (tensor<?x4x3x3xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<?x4x3x3xf32>
// CHECK-NOT: grove.
// CHECK: return %[[R]] : tensor<?x4x3x3xf32>
func.func @radix1_sigmoid(%u: tensor<?x4x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<4x8x1x1xf32>, %b2: tensor<4xf32>) -> tensor<?x4x3x3xf32> {
  %gap = grove.global_avg_pool %u : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<?x4x1x1xf32>
  %att = grove.sigmoid %fc2 : tensor<?x4x1x1xf32>
  %res = grove.mul %att, %u : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// Radix 1 with U first and cardinality 2.
// CHECK-LABEL: func.func @radix1_sigmoid_u_first
// CHECK-SAME: (%[[U:[^:]*]]: tensor<?x4x3x3xf32>, %[[W1:[^:]*]]: tensor<8x2x1x1xf32>, %[[B1:[^:]*]]: tensor<8xf32>, %[[SCALE:[^:]*]]: tensor<8xf32>, %[[SHIFT:[^:]*]]: tensor<8xf32>, %[[MEAN:[^:]*]]: tensor<8xf32>, %[[VAR:[^:]*]]: tensor<8xf32>, %[[W2:[^:]*]]: tensor<4x4x1x1xf32>, %[[B2:[^:]*]]: tensor<4xf32>)
// CHECK-NOT: grove.
// CHECK: %[[R:.*]] = grove.split_attention %[[U]], %[[W1]], %[[B1]], %[[SCALE]], %[[SHIFT]], %[[MEAN]], %[[VAR]], %[[W2]], %[[B2]] {cardinality = 2 : i64, epsilon = 1.000000e-05 : f64, radix = 1 : i64} : (tensor<?x4x3x3xf32>, tensor<8x2x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>) -> tensor<?x4x3x3xf32>
// CHECK-NOT: grove.
// CHECK: return %[[R]] : tensor<?x4x3x3xf32>
func.func @radix1_sigmoid_u_first(%u: tensor<?x4x3x3xf32>, %w1: tensor<8x2x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<4x4x1x1xf32>, %b2: tensor<4xf32>) -> tensor<?x4x3x3xf32> {
  %gap = grove.global_avg_pool %u : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x2x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>) -> tensor<?x4x1x1xf32>
  %att = grove.sigmoid %fc2 : tensor<?x4x1x1xf32>
  %res = grove.mul %u, %att : (tensor<?x4x3x3xf32>, tensor<?x4x1x1xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// Negative cases: each differs from a fused form in one point, and the
// function keeps every op (all checked in order).
//
// The splits cut U's height (dimension 2), not its channels.
// CHECK-LABEL: func.func @slices_along_height
// CHECK-NEXT: %{{.*}} = grove.slice %{{.*}} [0, 0, 0, 0] [-1, 4, 3, 3]
// CHECK-NEXT: %{{.*}} = grove.slice %{{.*}} [0, 0, 3, 0] [-1, 4, 6, 3]
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @slices_along_height(%u: tensor<?x4x6x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x4x6x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 0, 3, 0] [-1, 4, 6, 3] [1, 1, 1, 1] : tensor<?x4x6x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// Two splits, but the rSoftMax view says radix 4 (B x 1 x 4 x 2).
// CHECK-LABEL: func.func @radix_mismatch
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.reshape %{{.*}} : tensor<?x8x1x1xf32> -> tensor<?x1x4x2xf32>
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @radix_mismatch(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x4x2xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x4x2xf32> -> tensor<?x4x1x2xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x4x1x2xf32>
  %att = grove.reshape %softmax : tensor<?x4x1x2xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// The pooled tensor has another user.
// CHECK-LABEL: func.func @pooled_also_returned
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @pooled_also_returned(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> (tensor<?x4x3x3xf32>, tensor<?x4x1x1xf32>) {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res, %gap : tensor<?x4x3x3xf32>, tensor<?x4x1x1xf32>
}

// -----

// The attention tensor has another user.
// CHECK-LABEL: func.func @attention_also_returned
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @attention_also_returned(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> (tensor<?x4x3x3xf32>, tensor<?x8x1x1xf32>) {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res, %att : tensor<?x4x3x3xf32>, tensor<?x8x1x1xf32>
}

// -----

// A U split has a third user.
// CHECK-LABEL: func.func @split_also_returned
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @split_also_returned(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res, %s0 : tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>
}

// -----

// tanh where the MLP has a ReLU.
// CHECK-LABEL: func.func @tanh_activation
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.tanh
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @tanh_activation(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %tanh = grove.tanh %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %tanh, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// Radix 1 gated by a ReLU instead of a sigmoid.
// CHECK-LABEL: func.func @radix1_relu_gate
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.relu %{{.*}} : tensor<?x4x1x1xf32>
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @radix1_relu_gate(%u: tensor<?x4x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<4x8x1x1xf32>, %b2: tensor<4xf32>) -> tensor<?x4x3x3xf32> {
  %gap = grove.global_avg_pool %u : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<?x4x1x1xf32>
  %att = grove.relu %fc2 : tensor<?x4x1x1xf32>
  %res = grove.mul %att, %u : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// The softmax runs over the cardinality (axis 2), not the radix.
// CHECK-LABEL: func.func @softmax_wrong_axis
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax %{{.*}} {axis = 2 : i64}
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @softmax_wrong_axis(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 2 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// fc1 is strided (still 1 x 1 on the pooled tensor).
// CHECK-LABEL: func.func @strided_fc
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d {{.*}}strides = array<i64: 2, 2>
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @strided_fc(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// fc2 is a padded 3 x 3 convolution (still 1 x 1 out).
// CHECK-LABEL: func.func @fc_3x3
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d {{.*}} : (tensor<?x8x1x1xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @fc_3x3(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x3x3xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// The FCs have 2 groups but the view has cardinality 1.
// CHECK-LABEL: func.func @groups_not_cardinality
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d {{.*}}groups = 2
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d {{.*}}groups = 2
// CHECK-NEXT: %{{.*}} = grove.reshape %{{.*}} : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @groups_not_cardinality(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x2x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x4x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x2x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 2 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// Splits [0, 4) and [2, 6) of an 8-channel U overlap (and miss
// [6, 8)); the attention slices follow them.
// CHECK-LABEL: func.func @overlapping_splits
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice %{{.*}} [0, 2, 0, 0] [-1, 6, 3, 3]
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice %{{.*}} [0, 2, 0, 0] [-1, 6, 1, 1]
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @overlapping_splits(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 2, 0, 0] [-1, 6, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 2, 0, 0] [-1, 6, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// Splits 0 and 2 of a 3-split U (12 channels), everything else radix 3:
// the middle split is missing.
// CHECK-LABEL: func.func @splits_with_gap
// CHECK-NEXT: %{{.*}} = grove.slice %{{.*}} [0, 0, 0, 0] [-1, 4, 3, 3]
// CHECK-NEXT: %{{.*}} = grove.slice %{{.*}} [0, 8, 0, 0] [-1, 12, 3, 3]
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @splits_with_gap(%u: tensor<?x12x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<12x8x1x1xf32>, %b2: tensor<12xf32>) -> tensor<?x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x12x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 8, 0, 0] [-1, 12, 3, 3] [1, 1, 1, 1] : tensor<?x12x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<12x8x1x1xf32>, tensor<12xf32>) -> tensor<?x12x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x12x1x1xf32> -> tensor<?x1x3x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x3x4xf32> -> tensor<?x3x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x3x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x3x1x4xf32> -> tensor<?x12x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x12x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 8, 0, 0] [-1, 12, 1, 1] [1, 1, 1, 1] : tensor<?x12x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// Each split is weighted by the other split's attention.
// CHECK-LABEL: func.func @attention_slices_crossed
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.slice
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.transpose
// CHECK-NEXT: %{{.*}} = grove.softmax
// CHECK-NEXT: %{{.*}} = grove.reshape
// CHECK-NEXT: %{{.*}} = grove.slice %{{.*}} [0, 4, 0, 0] [-1, 8, 1, 1]
// CHECK-NEXT: %{{.*}} = grove.slice %{{.*}} [0, 0, 0, 0] [-1, 4, 1, 1]
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.mul
// CHECK-NEXT: %{{.*}} = grove.add
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @attention_slices_crossed(%u: tensor<?x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<?x8x3x3xf32> -> tensor<?x4x3x3xf32>
  %sum1 = grove.add %s0, %s1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %gap = grove.global_avg_pool %sum1 : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %view = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %radix_major = grove.transpose %view [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %softmax = grove.softmax %radix_major {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %softmax : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %a1 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x3x3xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// Radix 1 gating a tensor other than the pooled one.
// CHECK-LABEL: func.func @radix1_gates_another_tensor
// CHECK-SAME: (%[[U:[^:]*]]: tensor<?x4x3x3xf32>, %[[V:[^:]*]]: tensor<?x4x3x3xf32>,
// CHECK-NEXT: %{{.*}} = grove.global_avg_pool %[[U]]
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.batch_norm
// CHECK-NEXT: %{{.*}} = grove.relu
// CHECK-NEXT: %{{.*}} = grove.conv2d
// CHECK-NEXT: %{{.*}} = grove.sigmoid
// CHECK-NEXT: %{{.*}} = grove.mul %{{.*}}, %[[V]]
// CHECK-NEXT: return
// CHECK-NOT: grove.split_attention
func.func @radix1_gates_another_tensor(%u: tensor<?x4x3x3xf32>, %v: tensor<?x4x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %scale: tensor<8xf32>, %shift: tensor<8xf32>, %mean: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<4x8x1x1xf32>, %b2: tensor<4xf32>) -> tensor<?x4x3x3xf32> {
  %gap = grove.global_avg_pool %u : (tensor<?x4x3x3xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %scale, %shift, %mean, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<4x8x1x1xf32>, tensor<4xf32>) -> tensor<?x4x1x1xf32>
  %att = grove.sigmoid %fc2 : tensor<?x4x1x1xf32>
  %res = grove.mul %att, %v : (tensor<?x4x1x1xf32>, tensor<?x4x3x3xf32>) -> tensor<?x4x3x3xf32>
  return %res : tensor<?x4x3x3xf32>
}

// -----

// The weighted sum feeds a residual add: the inner sum still fuses.
// CHECK-LABEL: func.func @a
// CHECK: %[[SA:.*]] = grove.split_attention
// CHECK: grove.add %[[SA]], %{{.*}}
// CHECK-NOT: grove.slice
func.func @a(%u: tensor<2x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %sc: tensor<8xf32>, %sh: tensor<8xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>, %x: tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<2x8x3x3xf32> -> tensor<2x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<2x8x3x3xf32> -> tensor<2x4x3x3xf32>
  %sum = grove.add %s0, %s1 : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %gap = grove.global_avg_pool %sum : (tensor<2x4x3x3xf32>) -> tensor<2x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %sc, %sh, %mu, %var {epsilon = 1.0e-05 : f64} : (tensor<2x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %relu = grove.relu %bn : tensor<2x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %v = grove.reshape %fc2 : tensor<2x8x1x1xf32> -> tensor<2x1x2x4xf32>
  %vt = grove.transpose %v [0, 2, 1, 3] : tensor<2x1x2x4xf32> -> tensor<2x2x1x4xf32>
  %sm = grove.softmax %vt {axis = 1 : i64} : tensor<2x2x1x4xf32>
  %att = grove.reshape %sm : tensor<2x2x1x4xf32> -> tensor<2x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<2x8x1x1xf32> -> tensor<2x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<2x4x1x1xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<2x8x1x1xf32> -> tensor<2x4x1x1xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<2x4x1x1xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %out = grove.add %res, %x : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  return %out : tensor<2x4x3x3xf32>
}

// -----

// Radix 1 whose attention has one channel (broadcast over U's four):
// not split attention (its fc2 would not fit the op).
// CHECK-LABEL: func.func @b
// CHECK-NOT: grove.split_attention
// CHECK: grove.sigmoid
func.func @b(%u: tensor<2x4x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %sc: tensor<8xf32>, %sh: tensor<8xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<1x8x1x1xf32>, %b2: tensor<1xf32>) -> tensor<2x4x3x3xf32> {
  %gap = grove.global_avg_pool %u : (tensor<2x4x3x3xf32>) -> tensor<2x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %sc, %sh, %mu, %var {epsilon = 1.0e-05 : f64} : (tensor<2x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %relu = grove.relu %bn : tensor<2x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x8x1x1xf32>, tensor<1x8x1x1xf32>, tensor<1xf32>) -> tensor<2x1x1x1xf32>
  %att = grove.sigmoid %fc2 : tensor<2x1x1x1xf32>
  %res = grove.mul %att, %u : (tensor<2x1x1x1xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  return %res : tensor<2x4x3x3xf32>
}

// -----

// The attention of batch row 0 (reshaped to 1x16x1x1) broadcast over both
// rows of U: different semantics, no fusion.
// CHECK-LABEL: func.func @c
// CHECK-NOT: grove.split_attention
// CHECK: grove.softmax
func.func @c(%u: tensor<2x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %sc: tensor<8xf32>, %sh: tensor<8xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<2x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<2x8x3x3xf32> -> tensor<2x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, 3, 3] [1, 1, 1, 1] : tensor<2x8x3x3xf32> -> tensor<2x4x3x3xf32>
  %sum = grove.add %s0, %s1 : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %gap = grove.global_avg_pool %sum : (tensor<2x4x3x3xf32>) -> tensor<2x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %sc, %sh, %mu, %var {epsilon = 1.0e-05 : f64} : (tensor<2x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %relu = grove.relu %bn : tensor<2x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %v = grove.reshape %fc2 : tensor<2x8x1x1xf32> -> tensor<2x1x2x4xf32>
  %vt = grove.transpose %v [0, 2, 1, 3] : tensor<2x1x2x4xf32> -> tensor<2x2x1x4xf32>
  %sm = grove.softmax %vt {axis = 1 : i64} : tensor<2x2x1x4xf32>
  %att = grove.reshape %sm : tensor<2x2x1x4xf32> -> tensor<1x16x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<1x16x1x1xf32> -> tensor<1x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<1x4x1x1xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<1x16x1x1xf32> -> tensor<1x4x1x1xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<1x4x1x1xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  return %res : tensor<2x4x3x3xf32>
}

// -----

// The last split written with limit -1 (to the end) still tiles U.
// CHECK-LABEL: func.func @d
// CHECK: grove.split_attention
// CHECK-NOT: grove.slice
func.func @d(%u: tensor<2x8x3x3xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %sc: tensor<8xf32>, %sh: tensor<8xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<2x4x3x3xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, 3, 3] [1, 1, 1, 1] : tensor<2x8x3x3xf32> -> tensor<2x4x3x3xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, -1, 3, 3] [1, 1, 1, 1] : tensor<2x8x3x3xf32> -> tensor<2x4x3x3xf32>
  %sum = grove.add %s0, %s1 : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %gap = grove.global_avg_pool %sum : (tensor<2x4x3x3xf32>) -> tensor<2x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %sc, %sh, %mu, %var {epsilon = 1.0e-05 : f64} : (tensor<2x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %relu = grove.relu %bn : tensor<2x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<2x8x1x1xf32>
  %v = grove.reshape %fc2 : tensor<2x8x1x1xf32> -> tensor<2x1x2x4xf32>
  %vt = grove.transpose %v [0, 2, 1, 3] : tensor<2x1x2x4xf32> -> tensor<2x2x1x4xf32>
  %sm = grove.softmax %vt {axis = 1 : i64} : tensor<2x2x1x4xf32>
  %att = grove.reshape %sm : tensor<2x2x1x4xf32> -> tensor<2x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<2x8x1x1xf32> -> tensor<2x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<2x4x1x1xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<2x8x1x1xf32> -> tensor<2x4x1x1xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<2x4x1x1xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
  %res = grove.add %m0, %m1 : (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>

  return %res : tensor<2x4x3x3xf32>
}

// -----

// Dynamic batch, height and width fuse (and the op lowers: see
// test/Conversion/GroveToLinalg/nn.mlir).
// CHECK-LABEL: func.func @e
// CHECK: grove.split_attention {{.*}} -> tensor<?x4x?x?xf32>
// CHECK-NOT: grove.slice
func.func @e(%u: tensor<?x8x?x?xf32>, %w1: tensor<8x4x1x1xf32>, %b1: tensor<8xf32>, %sc: tensor<8xf32>, %sh: tensor<8xf32>, %mu: tensor<8xf32>, %var: tensor<8xf32>, %w2: tensor<8x8x1x1xf32>, %b2: tensor<8xf32>) -> tensor<?x4x?x?xf32> {
  %s0 = grove.slice %u [0, 0, 0, 0] [-1, 4, -1, -1] [1, 1, 1, 1] : tensor<?x8x?x?xf32> -> tensor<?x4x?x?xf32>
  %s1 = grove.slice %u [0, 4, 0, 0] [-1, 8, -1, -1] [1, 1, 1, 1] : tensor<?x8x?x?xf32> -> tensor<?x4x?x?xf32>
  %sum = grove.add %s0, %s1 : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %gap = grove.global_avg_pool %sum : (tensor<?x4x?x?xf32>) -> tensor<?x4x1x1xf32>
  %fc1 = grove.conv2d %gap, %w1, %b1 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x4x1x1xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %bn = grove.batch_norm %fc1, %sc, %sh, %mu, %var {epsilon = 1.0e-05 : f64} : (tensor<?x8x1x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %relu = grove.relu %bn : tensor<?x8x1x1xf32>
  %fc2 = grove.conv2d %relu, %w2, %b2 {groups = 1 : i64, strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<?x8x1x1xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<?x8x1x1xf32>
  %v = grove.reshape %fc2 : tensor<?x8x1x1xf32> -> tensor<?x1x2x4xf32>
  %vt = grove.transpose %v [0, 2, 1, 3] : tensor<?x1x2x4xf32> -> tensor<?x2x1x4xf32>
  %sm = grove.softmax %vt {axis = 1 : i64} : tensor<?x2x1x4xf32>
  %att = grove.reshape %sm : tensor<?x2x1x4xf32> -> tensor<?x8x1x1xf32>
  %a0 = grove.slice %att [0, 0, 0, 0] [-1, 4, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m0 = grove.mul %a0, %s0 : (tensor<?x4x1x1xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %a1 = grove.slice %att [0, 4, 0, 0] [-1, 8, 1, 1] [1, 1, 1, 1] : tensor<?x8x1x1xf32> -> tensor<?x4x1x1xf32>
  %m1 = grove.mul %a1, %s1 : (tensor<?x4x1x1xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>
  %res = grove.add %m0, %m1 : (tensor<?x4x?x?xf32>, tensor<?x4x?x?xf32>) -> tensor<?x4x?x?xf32>

  return %res : tensor<?x4x?x?xf32>
}
