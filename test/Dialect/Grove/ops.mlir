// RUN: grove-opt %s | grove-opt | FileCheck %s
// RUN: grove-opt %s --mlir-print-op-generic | grove-opt | FileCheck %s

// Round trip of every grove op through the custom and the generic form.

//===----------------------------------------------------------------------===//
// State ops
//===----------------------------------------------------------------------===//

// CHECK: grove.param @fc.weight : tensor<4x8xf32>
grove.param @fc.weight : tensor<4x8xf32>
// CHECK: grove.param @half : tensor<2x3xf16>
grove.param @half : tensor<2x3xf16>
// CHECK: grove.param @brain : tensor<5xbf16>
grove.param @brain : tensor<5xbf16>
// CHECK: grove.param @double : tensor<2xf64>
grove.param @double : tensor<2xf64>
// CHECK: grove.param @steps : tensor<i64>
grove.param @steps : tensor<i64>
// CHECK: grove.param @mask : tensor<3x3xi1>
grove.param @mask : tensor<3x3xi1>

// CHECK-LABEL: func.func @get_param
func.func @get_param() -> (tensor<4x8xf32>, tensor<2x3xf16>, tensor<5xbf16>,
                           tensor<2xf64>, tensor<i64>, tensor<3x3xi1>) {
  // CHECK: %[[W:.*]] = grove.get_param @fc.weight : tensor<4x8xf32>
  // CHECK: %[[H:.*]] = grove.get_param @half : tensor<2x3xf16>
  // CHECK: %[[B:.*]] = grove.get_param @brain : tensor<5xbf16>
  // CHECK: %[[D:.*]] = grove.get_param @double : tensor<2xf64>
  // CHECK: %[[S:.*]] = grove.get_param @steps : tensor<i64>
  // CHECK: %[[M:.*]] = grove.get_param @mask : tensor<3x3xi1>
  // CHECK: return %[[W]], %[[H]], %[[B]], %[[D]], %[[S]], %[[M]]
  %w = grove.get_param @fc.weight : tensor<4x8xf32>
  %h = grove.get_param @half : tensor<2x3xf16>
  %b = grove.get_param @brain : tensor<5xbf16>
  %d = grove.get_param @double : tensor<2xf64>
  %s = grove.get_param @steps : tensor<i64>
  %m = grove.get_param @mask : tensor<3x3xi1>
  return %w, %h, %b, %d, %s, %m : tensor<4x8xf32>, tensor<2x3xf16>,
      tensor<5xbf16>, tensor<2xf64>, tensor<i64>, tensor<3x3xi1>
}

//===----------------------------------------------------------------------===//
// Constants and data movement
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @constant
func.func @constant() -> (tensor<2xf32>, tensor<2x2xf32>, tensor<3xf16>,
                          tensor<bf16>, tensor<2x2xi32>, tensor<2xi1>) {
  // CHECK: %[[A:.*]] = grove.constant dense<[1.000000e+00, -2.500000e+00]> : tensor<2xf32>
  // CHECK: %[[B:.*]] = grove.constant dense<0.000000e+00> : tensor<2x2xf32>
  // CHECK: %[[C:.*]] = grove.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf16>
  // CHECK: %[[D:.*]] = grove.constant dense<5.000000e-01> : tensor<bf16>
  // CHECK: %[[E:.*]] = grove.constant dense<{{\[}}[1, 2], [3, 4]]> : tensor<2x2xi32>
  // CHECK: %[[F:.*]] = grove.constant dense<[true, false]> : tensor<2xi1>
  // CHECK: return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]], %[[F]]
  %a = grove.constant dense<[1.0, -2.5]> : tensor<2xf32>
  %b = grove.constant dense<0.0> : tensor<2x2xf32>
  %c = grove.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf16>
  %d = grove.constant dense<0.5> : tensor<bf16>
  %e = grove.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>
  %f = grove.constant dense<[true, false]> : tensor<2xi1>
  return %a, %b, %c, %d, %e, %f : tensor<2xf32>, tensor<2x2xf32>,
      tensor<3xf16>, tensor<bf16>, tensor<2x2xi32>, tensor<2xi1>
}

// CHECK-LABEL: func.func @reshape
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x64xf32>, %[[S:[^:]*]]: tensor<2x6xf16>, %[[I:[^:]*]]: tensor<4xi32>
func.func @reshape(%x: tensor<?x64xf32>, %s: tensor<2x6xf16>, %i: tensor<4xi32>)
    -> (tensor<?x8x8xf32>, tensor<3x4xf16>, tensor<?x3xf16>, tensor<2x2xi32>,
        tensor<?xf16>) {
  // CHECK: %[[R0:.*]] = grove.reshape %[[X]] : tensor<?x64xf32> -> tensor<?x8x8xf32>
  // CHECK: %[[R1:.*]] = grove.reshape %[[S]] : tensor<2x6xf16> -> tensor<3x4xf16>
  // CHECK: %[[R2:.*]] = grove.reshape %[[S]] : tensor<2x6xf16> -> tensor<?x3xf16>
  // CHECK: %[[R3:.*]] = grove.reshape %[[I]] : tensor<4xi32> -> tensor<2x2xi32>
  // CHECK: %[[R4:.*]] = grove.reshape %[[R2]] : tensor<?x3xf16> -> tensor<?xf16>
  // CHECK: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]]
  %r0 = grove.reshape %x : tensor<?x64xf32> -> tensor<?x8x8xf32>
  %r1 = grove.reshape %s : tensor<2x6xf16> -> tensor<3x4xf16>
  %r2 = grove.reshape %s : tensor<2x6xf16> -> tensor<?x3xf16>
  %r3 = grove.reshape %i : tensor<4xi32> -> tensor<2x2xi32>
  // Dynamic to dynamic, with a different static part.
  %r4 = grove.reshape %r2 : tensor<?x3xf16> -> tensor<?xf16>
  return %r0, %r1, %r2, %r3, %r4 : tensor<?x8x8xf32>, tensor<3x4xf16>,
      tensor<?x3xf16>, tensor<2x2xi32>, tensor<?xf16>
}

// CHECK-LABEL: func.func @reshape_scalar
// CHECK-SAME: %[[X:[^:]*]]: tensor<f32>
func.func @reshape_scalar(%x: tensor<f32>) -> tensor<1x1xf32> {
  // CHECK: %[[R:.*]] = grove.reshape %[[X]] : tensor<f32> -> tensor<1x1xf32>
  // CHECK: return %[[R]]
  %r = grove.reshape %x : tensor<f32> -> tensor<1x1xf32>
  return %r : tensor<1x1xf32>
}

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x64xf32>, %[[Y:[^:]*]]: tensor<2x3x4xbf16>
func.func @transpose(%x: tensor<?x64xf32>, %y: tensor<2x3x4xbf16>)
    -> (tensor<64x?xf32>, tensor<4x2x3xbf16>, tensor<2x3x4xbf16>) {
  // CHECK: %[[T0:.*]] = grove.transpose %[[X]] [1, 0] : tensor<?x64xf32> -> tensor<64x?xf32>
  // CHECK: %[[T1:.*]] = grove.transpose %[[Y]] [2, 0, 1] : tensor<2x3x4xbf16> -> tensor<4x2x3xbf16>
  // CHECK: %[[T2:.*]] = grove.transpose %[[Y]] [0, 1, 2] : tensor<2x3x4xbf16> -> tensor<2x3x4xbf16>
  // CHECK: return %[[T0]], %[[T1]], %[[T2]]
  %t0 = grove.transpose %x [1, 0] : tensor<?x64xf32> -> tensor<64x?xf32>
  %t1 = grove.transpose %y [2, 0, 1] : tensor<2x3x4xbf16> -> tensor<4x2x3xbf16>
  %t2 = grove.transpose %y [0, 1, 2] : tensor<2x3x4xbf16> -> tensor<2x3x4xbf16>
  return %t0, %t1, %t2 : tensor<64x?xf32>, tensor<4x2x3xbf16>,
      tensor<2x3x4xbf16>
}

// CHECK-LABEL: func.func @concat
// CHECK-SAME: %[[A:[^:]*]]: tensor<?x3xf32>, %[[B:[^:]*]]: tensor<?x5xf32>, %[[C:[^:]*]]: tensor<2x4xf16>, %[[D:[^:]*]]: tensor<?x4xf16>
func.func @concat(%a: tensor<?x3xf32>, %b: tensor<?x5xf32>, %c: tensor<2x4xf16>,
                  %d: tensor<?x4xf16>)
    -> (tensor<?x8xf32>, tensor<6x4xf16>, tensor<?x4xf16>, tensor<?x3xf32>) {
  // CHECK: %[[C0:.*]] = grove.concat %[[A]], %[[B]] {axis = 1 : i64} : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x8xf32>
  // CHECK: %[[C1:.*]] = grove.concat %[[C]], %[[C]], %[[C]] {axis = 0 : i64} : (tensor<2x4xf16>, tensor<2x4xf16>, tensor<2x4xf16>) -> tensor<6x4xf16>
  // CHECK: %[[C2:.*]] = grove.concat %[[C]], %[[D]] {axis = 0 : i64} : (tensor<2x4xf16>, tensor<?x4xf16>) -> tensor<?x4xf16>
  // CHECK: %[[C3:.*]] = grove.concat %[[A]] {axis = 1 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  // CHECK: return %[[C0]], %[[C1]], %[[C2]], %[[C3]]
  %c0 = grove.concat %a, %b {axis = 1 : i64}
      : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x8xf32>
  %c1 = grove.concat %c, %c, %c {axis = 0 : i64}
      : (tensor<2x4xf16>, tensor<2x4xf16>, tensor<2x4xf16>) -> tensor<6x4xf16>
  %c2 = grove.concat %c, %d {axis = 0 : i64}
      : (tensor<2x4xf16>, tensor<?x4xf16>) -> tensor<?x4xf16>
  %c3 = grove.concat %a {axis = 1 : i64} : (tensor<?x3xf32>) -> tensor<?x3xf32>
  return %c0, %c1, %c2, %c3 : tensor<?x8xf32>, tensor<6x4xf16>,
      tensor<?x4xf16>, tensor<?x3xf32>
}

// CHECK-LABEL: func.func @slice
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x8xf32>, %[[Y:[^:]*]]: tensor<10xbf16>
func.func @slice(%x: tensor<?x8xf32>, %y: tensor<10xbf16>)
    -> (tensor<?x2xf32>, tensor<3xbf16>, tensor<0xbf16>, tensor<?x8xf32>) {
  // CHECK: %[[S0:.*]] = grove.slice %[[X]] [0, 2] [-1, 6] [1, 2] : tensor<?x8xf32> -> tensor<?x2xf32>
  // CHECK: %[[S1:.*]] = grove.slice %[[Y]] [1] [-1] [3] : tensor<10xbf16> -> tensor<3xbf16>
  // CHECK: %[[S2:.*]] = grove.slice %[[Y]] [10] [10] [1] : tensor<10xbf16> -> tensor<0xbf16>
  // CHECK: %[[S3:.*]] = grove.slice %[[X]] [1, 0] [-1, -1] [1, 1] : tensor<?x8xf32> -> tensor<?x8xf32>
  // CHECK: return %[[S0]], %[[S1]], %[[S2]], %[[S3]]
  %s0 = grove.slice %x [0, 2] [-1, 6] [1, 2] : tensor<?x8xf32> -> tensor<?x2xf32>
  %s1 = grove.slice %y [1] [-1] [3] : tensor<10xbf16> -> tensor<3xbf16>
  %s2 = grove.slice %y [10] [10] [1] : tensor<10xbf16> -> tensor<0xbf16>
  %s3 = grove.slice %x [1, 0] [-1, -1] [1, 1] : tensor<?x8xf32> -> tensor<?x8xf32>
  return %s0, %s1, %s2, %s3 : tensor<?x2xf32>, tensor<3xbf16>, tensor<0xbf16>,
      tensor<?x8xf32>
}

// CHECK-LABEL: func.func @broadcast_to
// CHECK-SAME: %[[B:[^:]*]]: tensor<10xf32>, %[[N:[^:]*]]: index, %[[M:[^:]*]]: index, %[[H:[^:]*]]: tensor<1x?xf16>
func.func @broadcast_to(%bias: tensor<10xf32>, %n: index, %m: index,
                        %h: tensor<1x?xf16>)
    -> (tensor<?x10xf32>, tensor<3x10xf32>, tensor<?x?x10xf32>, tensor<4x?xf16>,
        tensor<?x?xf16>) {
  // CHECK: %[[B0:.*]] = grove.broadcast_to %[[B]](%[[N]]) : tensor<10xf32> -> tensor<?x10xf32>
  // CHECK: %[[B1:.*]] = grove.broadcast_to %[[B]] : tensor<10xf32> -> tensor<3x10xf32>
  // CHECK: %[[B2:.*]] = grove.broadcast_to %[[B]](%[[N]], %[[M]]) : tensor<10xf32> -> tensor<?x?x10xf32>
  // CHECK: %[[B3:.*]] = grove.broadcast_to %[[H]](%[[M]]) : tensor<1x?xf16> -> tensor<4x?xf16>
  // CHECK: %[[B4:.*]] = grove.broadcast_to %[[H]](%[[N]], %[[M]]) : tensor<1x?xf16> -> tensor<?x?xf16>
  // CHECK: return %[[B0]], %[[B1]], %[[B2]], %[[B3]], %[[B4]]
  %b0 = grove.broadcast_to %bias (%n) : tensor<10xf32> -> tensor<?x10xf32>
  %b1 = grove.broadcast_to %bias : tensor<10xf32> -> tensor<3x10xf32>
  %b2 = grove.broadcast_to %bias (%n, %m) : tensor<10xf32> -> tensor<?x?x10xf32>
  %b3 = grove.broadcast_to %h (%m) : tensor<1x?xf16> -> tensor<4x?xf16>
  %b4 = grove.broadcast_to %h (%n, %m) : tensor<1x?xf16> -> tensor<?x?xf16>
  return %b0, %b1, %b2, %b3, %b4 : tensor<?x10xf32>, tensor<3x10xf32>,
      tensor<?x?x10xf32>, tensor<4x?xf16>, tensor<?x?xf16>
}

//===----------------------------------------------------------------------===//
// Elementwise binary ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @binary_same_shape
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<4x8xf32>
func.func @binary_same_shape(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>,
        tensor<4x8xf32>, tensor<4x8xf32>) {
  // CHECK: %[[ADD:.*]] = grove.add %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[SUB:.*]] = grove.sub %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[MUL:.*]] = grove.mul %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[DIV:.*]] = grove.div %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[MAX:.*]] = grove.max %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[MIN:.*]] = grove.min %[[A]], %[[B]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]], %[[MAX]], %[[MIN]]
  %0 = grove.add %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = grove.sub %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = grove.mul %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = grove.div %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = grove.max %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = grove.min %a, %b : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<4x8xf32>,
      tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @binary_broadcast
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x10xf32>, %[[B:[^:]*]]: tensor<10xf32>, %[[C:[^:]*]]: tensor<3x1xf32>, %[[R:[^:]*]]: tensor<1x4xf32>, %[[S:[^:]*]]: tensor<f32>
func.func @binary_broadcast(%x: tensor<?x10xf32>, %b: tensor<10xf32>,
                            %c: tensor<3x1xf32>, %r: tensor<1x4xf32>,
                            %s: tensor<f32>)
    -> (tensor<?x10xf32>, tensor<?x10xf32>, tensor<3x4xf32>, tensor<3x4xf32>,
        tensor<?x10xf32>, tensor<2x3x4xf32>) {
  // Rank extension on the right operand and on the left operand.
  // CHECK: %[[ADD:.*]] = grove.add %[[X]], %[[B]] : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  // CHECK: %[[SUB:.*]] = grove.sub %[[B]], %[[X]] : (tensor<10xf32>, tensor<?x10xf32>) -> tensor<?x10xf32>
  // Both operands stretch a static 1.
  // CHECK: %[[MUL:.*]] = grove.mul %[[C]], %[[R]] : (tensor<3x1xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  // CHECK: %[[DIV:.*]] = grove.div %[[R]], %[[C]] : (tensor<1x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  // A rank-0 operand broadcasts to anything.
  // CHECK: %[[MAX:.*]] = grove.max %[[X]], %[[S]] : (tensor<?x10xf32>, tensor<f32>) -> tensor<?x10xf32>
  // CHECK: %[[MIN:.*]] = grove.min %[[MUL]], %[[T:.*]] : (tensor<3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: return %[[ADD]], %[[SUB]], %[[MUL]], %[[DIV]], %[[MAX]], %[[MIN]]
  %0 = grove.add %x, %b : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  %1 = grove.sub %b, %x : (tensor<10xf32>, tensor<?x10xf32>) -> tensor<?x10xf32>
  %2 = grove.mul %c, %r : (tensor<3x1xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %3 = grove.div %r, %c : (tensor<1x4xf32>, tensor<3x1xf32>) -> tensor<3x4xf32>
  %4 = grove.max %x, %s : (tensor<?x10xf32>, tensor<f32>) -> tensor<?x10xf32>
  %t = grove.constant dense<1.0> : tensor<2x1x4xf32>
  %5 = grove.min %2, %t : (tensor<3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x10xf32>, tensor<?x10xf32>,
      tensor<3x4xf32>, tensor<3x4xf32>, tensor<?x10xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @binary_dynamic
// CHECK-SAME: %[[A:[^:]*]]: tensor<?x?xf32>, %[[B:[^:]*]]: tensor<?x1xf32>, %[[C:[^:]*]]: tensor<1x?xf32>, %[[D:[^:]*]]: tensor<?x4xf32>
func.func @binary_dynamic(%a: tensor<?x?xf32>, %b: tensor<?x1xf32>,
                          %c: tensor<1x?xf32>, %d: tensor<?x4xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x4xf32>,
        tensor<?x4xf32>, tensor<?x?xf32>) {
  // `?` against `?` stays `?`; a static 1 stretches to `?`.
  // CHECK: grove.add %[[A]], %[[A]] : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  // CHECK: grove.sub %[[A]], %[[B]] : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  // CHECK: grove.mul %[[B]], %[[C]] : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  // A static size stretched from a static 1 stays static.
  // CHECK: grove.div %[[D]], %[[B]] : (tensor<?x4xf32>, tensor<?x1xf32>) -> tensor<?x4xf32>
  // CHECK: grove.max %[[B]], %[[D]] : (tensor<?x1xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  // CHECK: grove.min %[[C]], %[[B]] : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %0 = grove.add %a, %a : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = grove.sub %a, %b : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %2 = grove.mul %b, %c : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  %3 = grove.div %d, %b : (tensor<?x4xf32>, tensor<?x1xf32>) -> tensor<?x4xf32>
  %4 = grove.max %b, %d : (tensor<?x1xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %5 = grove.min %c, %b : (tensor<1x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<?x?xf32>, tensor<?x?xf32>,
      tensor<?x?xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x?xf32>
}

// CHECK-LABEL: func.func @binary_low_precision
// CHECK-SAME: %[[H:[^:]*]]: tensor<2x3xf16>, %[[HB:[^:]*]]: tensor<3xf16>, %[[B:[^:]*]]: tensor<?x3xbf16>, %[[BB:[^:]*]]: tensor<1x3xbf16>
func.func @binary_low_precision(%h: tensor<2x3xf16>, %hb: tensor<3xf16>,
                                %b: tensor<?x3xbf16>, %bb: tensor<1x3xbf16>)
    -> (tensor<2x3xf16>, tensor<2x3xf16>, tensor<?x3xbf16>, tensor<?x3xbf16>) {
  // CHECK: grove.add %[[H]], %[[HB]] : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  // CHECK: grove.div %[[H]], %[[H]] : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  // CHECK: grove.mul %[[B]], %[[BB]] : (tensor<?x3xbf16>, tensor<1x3xbf16>) -> tensor<?x3xbf16>
  // CHECK: grove.max %[[BB]], %[[B]] : (tensor<1x3xbf16>, tensor<?x3xbf16>) -> tensor<?x3xbf16>
  %0 = grove.add %h, %hb : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xf16>
  %1 = grove.div %h, %h : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %2 = grove.mul %b, %bb : (tensor<?x3xbf16>, tensor<1x3xbf16>) -> tensor<?x3xbf16>
  %3 = grove.max %bb, %b : (tensor<1x3xbf16>, tensor<?x3xbf16>) -> tensor<?x3xbf16>
  return %0, %1, %2, %3 : tensor<2x3xf16>, tensor<2x3xf16>, tensor<?x3xbf16>,
      tensor<?x3xbf16>
}

//===----------------------------------------------------------------------===//
// Elementwise unary ops
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @unary
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x8xf32>
func.func @unary(%x: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>,
        tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  // CHECK: %[[RELU:.*]] = grove.relu %[[X]] : tensor<?x8xf32>
  // CHECK: %[[SIG:.*]] = grove.sigmoid %[[RELU]] : tensor<?x8xf32>
  // CHECK: %[[TANH:.*]] = grove.tanh %[[SIG]] : tensor<?x8xf32>
  // CHECK: %[[EXP:.*]] = grove.exp %[[TANH]] : tensor<?x8xf32>
  // CHECK: %[[LOG:.*]] = grove.log %[[EXP]] : tensor<?x8xf32>
  // CHECK: %[[SQRT:.*]] = grove.sqrt %[[LOG]] : tensor<?x8xf32>
  // CHECK: %[[GELU:.*]] = grove.gelu %[[SQRT]] : tensor<?x8xf32>
  // CHECK: return %[[RELU]], %[[SIG]], %[[TANH]], %[[EXP]], %[[LOG]], %[[SQRT]], %[[GELU]]
  %0 = grove.relu %x : tensor<?x8xf32>
  %1 = grove.sigmoid %0 : tensor<?x8xf32>
  %2 = grove.tanh %1 : tensor<?x8xf32>
  %3 = grove.exp %2 : tensor<?x8xf32>
  %4 = grove.log %3 : tensor<?x8xf32>
  %5 = grove.sqrt %4 : tensor<?x8xf32>
  %6 = grove.gelu %5 : tensor<?x8xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?x8xf32>, tensor<?x8xf32>,
      tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>,
      tensor<?x8xf32>
}

// CHECK-LABEL: func.func @unary_low_precision
// CHECK-SAME: %[[H:[^:]*]]: tensor<4xf16>, %[[B:[^:]*]]: tensor<2x?xbf16>, %[[S:[^:]*]]: tensor<f32>
func.func @unary_low_precision(%h: tensor<4xf16>, %b: tensor<2x?xbf16>,
                               %s: tensor<f32>)
    -> (tensor<4xf16>, tensor<4xf16>, tensor<2x?xbf16>, tensor<2x?xbf16>,
        tensor<f32>) {
  // CHECK: grove.gelu %[[H]] : tensor<4xf16>
  // CHECK: grove.exp %[[H]] : tensor<4xf16>
  // CHECK: grove.sigmoid %[[B]] : tensor<2x?xbf16>
  // CHECK: grove.tanh %[[B]] : tensor<2x?xbf16>
  // CHECK: grove.relu %[[S]] : tensor<f32>
  %0 = grove.gelu %h : tensor<4xf16>
  %1 = grove.exp %h : tensor<4xf16>
  %2 = grove.sigmoid %b : tensor<2x?xbf16>
  %3 = grove.tanh %b : tensor<2x?xbf16>
  %4 = grove.relu %s : tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<4xf16>, tensor<4xf16>, tensor<2x?xbf16>,
      tensor<2x?xbf16>, tensor<f32>
}

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @matmul_2x2
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x64xf32>, %[[W:[^:]*]]: tensor<128x64xf32>, %[[V:[^:]*]]: tensor<64x128xf32>, %[[T:[^:]*]]: tensor<64x?xf32>
func.func @matmul_2x2(%x: tensor<?x64xf32>, %w: tensor<128x64xf32>,
                      %v: tensor<64x128xf32>, %t: tensor<64x?xf32>)
    -> (tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>,
        tensor<128x128xf32>) {
  // CHECK: %[[M0:.*]] = grove.matmul %[[X]], %[[V]] : (tensor<?x64xf32>, tensor<64x128xf32>) -> tensor<?x128xf32>
  // CHECK: %[[M1:.*]] = grove.matmul %[[X]], %[[W]] {transpose_rhs} : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  // CHECK: %[[M2:.*]] = grove.matmul %[[T]], %[[V]] {transpose_lhs} : (tensor<64x?xf32>, tensor<64x128xf32>) -> tensor<?x128xf32>
  // CHECK: %[[M3:.*]] = grove.matmul %[[V]], %[[W]] {transpose_lhs, transpose_rhs} : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<128x128xf32>
  // CHECK: return %[[M0]], %[[M1]], %[[M2]], %[[M3]]
  %0 = grove.matmul %x, %v
      : (tensor<?x64xf32>, tensor<64x128xf32>) -> tensor<?x128xf32>
  %1 = grove.matmul %x, %w {transpose_rhs}
      : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
  %2 = grove.matmul %t, %v {transpose_lhs}
      : (tensor<64x?xf32>, tensor<64x128xf32>) -> tensor<?x128xf32>
  %3 = grove.matmul %v, %w {transpose_lhs, transpose_rhs}
      : (tensor<64x128xf32>, tensor<128x64xf32>) -> tensor<128x128xf32>
  return %0, %1, %2, %3 : tensor<?x128xf32>, tensor<?x128xf32>,
      tensor<?x128xf32>, tensor<128x128xf32>
}

// CHECK-LABEL: func.func @matmul_3x3
// CHECK-SAME: %[[A:[^:]*]]: tensor<?x4x8xf32>, %[[B:[^:]*]]: tensor<?x8x6xf32>, %[[C:[^:]*]]: tensor<?x6x8xf32>, %[[D:[^:]*]]: tensor<?x8x4xf32>
func.func @matmul_3x3(%a: tensor<?x4x8xf32>, %b: tensor<?x8x6xf32>,
                      %c: tensor<?x6x8xf32>, %d: tensor<?x8x4xf32>)
    -> (tensor<?x4x6xf32>, tensor<?x4x6xf32>, tensor<?x4x6xf32>,
        tensor<?x4x6xf32>) {
  // CHECK: %[[M0:.*]] = grove.matmul %[[A]], %[[B]] : (tensor<?x4x8xf32>, tensor<?x8x6xf32>) -> tensor<?x4x6xf32>
  // CHECK: %[[M1:.*]] = grove.matmul %[[A]], %[[C]] {transpose_rhs} : (tensor<?x4x8xf32>, tensor<?x6x8xf32>) -> tensor<?x4x6xf32>
  // CHECK: %[[M2:.*]] = grove.matmul %[[D]], %[[B]] {transpose_lhs} : (tensor<?x8x4xf32>, tensor<?x8x6xf32>) -> tensor<?x4x6xf32>
  // CHECK: %[[M3:.*]] = grove.matmul %[[D]], %[[C]] {transpose_lhs, transpose_rhs} : (tensor<?x8x4xf32>, tensor<?x6x8xf32>) -> tensor<?x4x6xf32>
  // CHECK: return %[[M0]], %[[M1]], %[[M2]], %[[M3]]
  %0 = grove.matmul %a, %b
      : (tensor<?x4x8xf32>, tensor<?x8x6xf32>) -> tensor<?x4x6xf32>
  %1 = grove.matmul %a, %c {transpose_rhs}
      : (tensor<?x4x8xf32>, tensor<?x6x8xf32>) -> tensor<?x4x6xf32>
  %2 = grove.matmul %d, %b {transpose_lhs}
      : (tensor<?x8x4xf32>, tensor<?x8x6xf32>) -> tensor<?x4x6xf32>
  %3 = grove.matmul %d, %c {transpose_lhs, transpose_rhs}
      : (tensor<?x8x4xf32>, tensor<?x6x8xf32>) -> tensor<?x4x6xf32>
  return %0, %1, %2, %3 : tensor<?x4x6xf32>, tensor<?x4x6xf32>,
      tensor<?x4x6xf32>, tensor<?x4x6xf32>
}

// CHECK-LABEL: func.func @matmul_3x2
// CHECK-SAME: %[[S:[^:]*]]: tensor<2x?x64xf32>, %[[W:[^:]*]]: tensor<128x64xf32>, %[[ST:[^:]*]]: tensor<2x64x?xf32>, %[[V:[^:]*]]: tensor<64x128xf32>
func.func @matmul_3x2(%s: tensor<2x?x64xf32>, %w: tensor<128x64xf32>,
                      %st: tensor<2x64x?xf32>, %v: tensor<64x128xf32>)
    -> (tensor<2x?x128xf32>, tensor<2x?x128xf32>, tensor<2x?x128xf32>) {
  // CHECK: %[[M0:.*]] = grove.matmul %[[S]], %[[W]] {transpose_rhs} : (tensor<2x?x64xf32>, tensor<128x64xf32>) -> tensor<2x?x128xf32>
  // CHECK: %[[M1:.*]] = grove.matmul %[[S]], %[[V]] : (tensor<2x?x64xf32>, tensor<64x128xf32>) -> tensor<2x?x128xf32>
  // CHECK: %[[M2:.*]] = grove.matmul %[[ST]], %[[W]] {transpose_lhs, transpose_rhs} : (tensor<2x64x?xf32>, tensor<128x64xf32>) -> tensor<2x?x128xf32>
  // CHECK: return %[[M0]], %[[M1]], %[[M2]]
  %0 = grove.matmul %s, %w {transpose_rhs}
      : (tensor<2x?x64xf32>, tensor<128x64xf32>) -> tensor<2x?x128xf32>
  %1 = grove.matmul %s, %v
      : (tensor<2x?x64xf32>, tensor<64x128xf32>) -> tensor<2x?x128xf32>
  %2 = grove.matmul %st, %w {transpose_lhs, transpose_rhs}
      : (tensor<2x64x?xf32>, tensor<128x64xf32>) -> tensor<2x?x128xf32>
  return %0, %1, %2 : tensor<2x?x128xf32>, tensor<2x?x128xf32>,
      tensor<2x?x128xf32>
}

// CHECK-LABEL: func.func @matmul_low_precision
// CHECK-SAME: %[[H:[^:]*]]: tensor<?x?xf16>, %[[B:[^:]*]]: tensor<3x2x4xbf16>, %[[C:[^:]*]]: tensor<3x4x5xbf16>
func.func @matmul_low_precision(%h: tensor<?x?xf16>, %b: tensor<3x2x4xbf16>,
                                %c: tensor<3x4x5xbf16>)
    -> (tensor<?x?xf16>, tensor<3x2x5xbf16>) {
  // CHECK: grove.matmul %[[H]], %[[H]] : (tensor<?x?xf16>, tensor<?x?xf16>) -> tensor<?x?xf16>
  // CHECK: grove.matmul %[[B]], %[[C]] : (tensor<3x2x4xbf16>, tensor<3x4x5xbf16>) -> tensor<3x2x5xbf16>
  %0 = grove.matmul %h, %h : (tensor<?x?xf16>, tensor<?x?xf16>) -> tensor<?x?xf16>
  %1 = grove.matmul %b, %c
      : (tensor<3x2x4xbf16>, tensor<3x4x5xbf16>) -> tensor<3x2x5xbf16>
  return %0, %1 : tensor<?x?xf16>, tensor<3x2x5xbf16>
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @softmax
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x10xf32>, %[[H:[^:]*]]: tensor<2x3x4xf16>, %[[B:[^:]*]]: tensor<5xbf16>
func.func @softmax(%x: tensor<?x10xf32>, %h: tensor<2x3x4xf16>,
                   %b: tensor<5xbf16>)
    -> (tensor<?x10xf32>, tensor<?x10xf32>, tensor<?x10xf32>,
        tensor<2x3x4xf16>, tensor<2x3x4xf16>, tensor<5xbf16>) {
  // CHECK: grove.softmax %[[X]] {axis = 1 : i64} : tensor<?x10xf32>
  // CHECK: grove.softmax %[[X]] {axis = -1 : i64} : tensor<?x10xf32>
  // CHECK: grove.log_softmax %[[X]] {axis = 0 : i64} : tensor<?x10xf32>
  // CHECK: grove.log_softmax %[[H]] {axis = -3 : i64} : tensor<2x3x4xf16>
  // CHECK: grove.softmax %[[H]] {axis = -2 : i64} : tensor<2x3x4xf16>
  // CHECK: grove.log_softmax %[[B]] {axis = -1 : i64} : tensor<5xbf16>
  %0 = grove.softmax %x {axis = 1 : i64} : tensor<?x10xf32>
  %1 = grove.softmax %x {axis = -1 : i64} : tensor<?x10xf32>
  %2 = grove.log_softmax %x {axis = 0 : i64} : tensor<?x10xf32>
  %3 = grove.log_softmax %h {axis = -3 : i64} : tensor<2x3x4xf16>
  %4 = grove.softmax %h {axis = -2 : i64} : tensor<2x3x4xf16>
  %5 = grove.log_softmax %b {axis = -1 : i64} : tensor<5xbf16>
  return %0, %1, %2, %3, %4, %5 : tensor<?x10xf32>, tensor<?x10xf32>,
      tensor<?x10xf32>, tensor<2x3x4xf16>, tensor<2x3x4xf16>, tensor<5xbf16>
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @reduce
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x10xf32>, %[[Y:[^:]*]]: tensor<2x3x4xf32>
func.func @reduce(%x: tensor<?x10xf32>, %y: tensor<2x3x4xf32>)
    -> (tensor<?xf32>, tensor<?x1xf32>, tensor<10xf32>, tensor<1x10xf32>,
        tensor<3xf32>, tensor<1x3x1xf32>, tensor<f32>, tensor<1x1x1xf32>,
        tensor<2x3x4xf32>) {
  // CHECK: grove.reduce_sum %[[X]] {axes = array<i64: 1>} : tensor<?x10xf32> -> tensor<?xf32>
  // CHECK: grove.reduce_sum %[[X]] {axes = array<i64: -1>, keepdims} : tensor<?x10xf32> -> tensor<?x1xf32>
  // CHECK: grove.reduce_mean %[[X]] {axes = array<i64: 0>} : tensor<?x10xf32> -> tensor<10xf32>
  // CHECK: grove.reduce_mean %[[X]] {axes = array<i64: -2>, keepdims} : tensor<?x10xf32> -> tensor<1x10xf32>
  // Axes need not be sorted and may mix signs.
  // CHECK: grove.reduce_max %[[Y]] {axes = array<i64: -1, 0>} : tensor<2x3x4xf32> -> tensor<3xf32>
  // CHECK: grove.reduce_max %[[Y]] {axes = array<i64: 2, -3>, keepdims} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  // CHECK: grove.reduce_sum %[[Y]] {axes = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<f32>
  // CHECK: grove.reduce_mean %[[Y]] {axes = array<i64: -3, -2, -1>, keepdims} : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
  // CHECK: grove.reduce_max %[[Y]] {axes = array<i64>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %0 = grove.reduce_sum %x {axes = array<i64: 1>} : tensor<?x10xf32> -> tensor<?xf32>
  %1 = grove.reduce_sum %x {axes = array<i64: -1>, keepdims}
      : tensor<?x10xf32> -> tensor<?x1xf32>
  %2 = grove.reduce_mean %x {axes = array<i64: 0>} : tensor<?x10xf32> -> tensor<10xf32>
  %3 = grove.reduce_mean %x {axes = array<i64: -2>, keepdims}
      : tensor<?x10xf32> -> tensor<1x10xf32>
  %4 = grove.reduce_max %y {axes = array<i64: -1, 0>}
      : tensor<2x3x4xf32> -> tensor<3xf32>
  %5 = grove.reduce_max %y {axes = array<i64: 2, -3>, keepdims}
      : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  %6 = grove.reduce_sum %y {axes = array<i64: 0, 1, 2>}
      : tensor<2x3x4xf32> -> tensor<f32>
  %7 = grove.reduce_mean %y {axes = array<i64: -3, -2, -1>, keepdims}
      : tensor<2x3x4xf32> -> tensor<1x1x1xf32>
  %8 = grove.reduce_max %y {axes = array<i64>}
      : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<?xf32>, tensor<?x1xf32>,
      tensor<10xf32>, tensor<1x10xf32>, tensor<3xf32>, tensor<1x3x1xf32>,
      tensor<f32>, tensor<1x1x1xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @reduce_low_precision
// CHECK-SAME: %[[H:[^:]*]]: tensor<?x8xf16>, %[[B:[^:]*]]: tensor<4x?xbf16>
func.func @reduce_low_precision(%h: tensor<?x8xf16>, %b: tensor<4x?xbf16>)
    -> (tensor<?xf16>, tensor<1x?xbf16>, tensor<4xbf16>) {
  // CHECK: grove.reduce_sum %[[H]] {axes = array<i64: -1>} : tensor<?x8xf16> -> tensor<?xf16>
  // CHECK: grove.reduce_mean %[[B]] {axes = array<i64: 0>, keepdims} : tensor<4x?xbf16> -> tensor<1x?xbf16>
  // CHECK: grove.reduce_max %[[B]] {axes = array<i64: -1>} : tensor<4x?xbf16> -> tensor<4xbf16>
  %0 = grove.reduce_sum %h {axes = array<i64: -1>} : tensor<?x8xf16> -> tensor<?xf16>
  %1 = grove.reduce_mean %b {axes = array<i64: 0>, keepdims}
      : tensor<4x?xbf16> -> tensor<1x?xbf16>
  %2 = grove.reduce_max %b {axes = array<i64: -1>} : tensor<4x?xbf16> -> tensor<4xbf16>
  return %0, %1, %2 : tensor<?xf16>, tensor<1x?xbf16>, tensor<4xbf16>
}

// A stride larger than the dimension keeps one element (no overflow).
// CHECK-LABEL: func.func @slice_huge_stride
// CHECK: grove.slice %{{.*}} [0] [8] [9223372036854775807] : tensor<8xf32> -> tensor<1xf32>
func.func @slice_huge_stride(%x: tensor<8xf32>) -> tensor<1xf32> {
  %0 = grove.slice %x [0] [8] [9223372036854775807] : tensor<8xf32> -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// CHECK-LABEL: func.func @agree_dims
// CHECK: %{{.*}} = grove.agree_dims %{{.*}}, %{{.*}}, "operands 0 and 1" : index
func.func @agree_dims(%a: index, %b: index) -> index {
  %0 = grove.agree_dims %a, %b, "operands 0 and 1" : index
  return %0 : index
}

//===----------------------------------------------------------------------===//
// Convolution, normalisation and pooling (GroveNNOps.td)
//===----------------------------------------------------------------------===//

// Output sizes are ⌊(H + pt + pb - d·(K - 1) - 1) / s⌋ + 1, checked against
// torch.nn.functional.conv2d.

// CHECK-LABEL: func.func @conv2d
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x64x56x56xf32>, %[[W3:[^:]*]]: tensor<128x32x3x3xf32>, %[[W1:[^:]*]]: tensor<256x64x1x1xf32>, %[[B:[^:]*]]: tensor<256xf32>
func.func @conv2d(%x: tensor<?x64x56x56xf32>, %w3: tensor<128x32x3x3xf32>,
                  %w1: tensor<256x64x1x1xf32>, %b: tensor<256xf32>)
    -> (tensor<?x128x56x56xf32>, tensor<?x256x28x28xf32>) {
  // Grouped (2 groups of 32 input channels), padded, no bias: 56 + 2 - 2 - 1 = 55, 55 / 1 + 1 = 56.
  // CHECK: grove.conv2d %[[X]], %[[W3]] {dilations = array<i64: 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x64x56x56xf32>, tensor<128x32x3x3xf32>) -> tensor<?x128x56x56xf32>
  // With a bias, strided 1x1: 56 - 1 = 55, ⌊55 / 2⌋ + 1 = 28.
  // CHECK: grove.conv2d %[[X]], %[[W1]], %[[B]] {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x64x56x56xf32>, tensor<256x64x1x1xf32>, tensor<256xf32>) -> tensor<?x256x28x28xf32>
  %0 = grove.conv2d %x, %w3 {groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>,
                             strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<?x64x56x56xf32>, tensor<128x32x3x3xf32>) -> tensor<?x128x56x56xf32>
  %1 = grove.conv2d %x, %w1, %b {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                                 strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>}
      : (tensor<?x64x56x56xf32>, tensor<256x64x1x1xf32>, tensor<256xf32>)
      -> tensor<?x256x28x28xf32>
  return %0, %1 : tensor<?x128x56x56xf32>, tensor<?x256x28x28xf32>
}

// CHECK-LABEL: func.func @conv2d_strided_dilated
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x3x17x20xf32>, %[[W:[^:]*]]: tensor<8x3x5x3xf32>, %[[B:[^:]*]]: tensor<8xf32>
func.func @conv2d_strided_dilated(%x: tensor<1x3x17x20xf32>, %w: tensor<8x3x5x3xf32>,
                                  %b: tensor<8xf32>) -> tensor<1x8x7x7xf32> {
  // Per-dimension strides and dilations, padding [top 2, left 1, bottom 3, right 0]:
  // height ⌊(17 + 2 + 3 - 2·4 - 1) / 2⌋ + 1 = ⌊13 / 2⌋ + 1 = 7,
  // width ⌊(20 + 1 + 0 - 1·2 - 1) / 3⌋ + 1 = 18 / 3 + 1 = 7.
  // CHECK: grove.conv2d %[[X]], %[[W]], %[[B]] {dilations = array<i64: 2, 1>, groups = 1 : i64, padding = array<i64: 2, 1, 3, 0>, strides = array<i64: 2, 3>} : (tensor<1x3x17x20xf32>, tensor<8x3x5x3xf32>, tensor<8xf32>) -> tensor<1x8x7x7xf32>
  %0 = grove.conv2d %x, %w, %b {groups = 1 : i64, padding = array<i64: 2, 1, 3, 0>,
                                strides = array<i64: 2, 3>, dilations = array<i64: 2, 1>}
      : (tensor<1x3x17x20xf32>, tensor<8x3x5x3xf32>, tensor<8xf32>) -> tensor<1x8x7x7xf32>
  return %0 : tensor<1x8x7x7xf32>
}

// CHECK-LABEL: func.func @conv2d_edge
// CHECK-SAME: %[[D:[^:]*]]: tensor<2x8x7x7xf16>, %[[DW:[^:]*]]: tensor<8x1x3x3xf16>, %[[S:[^:]*]]: tensor<1x3x224x224xbf16>, %[[SW:[^:]*]]: tensor<64x3x7x7xbf16>, %[[Y:[^:]*]]: tensor<?x3x?x?xf32>, %[[YW:[^:]*]]: tensor<16x3x3x3xf32>, %[[E:[^:]*]]: tensor<1x3x3x5xf32>
func.func @conv2d_edge(%d: tensor<2x8x7x7xf16>, %dw: tensor<8x1x3x3xf16>,
                       %s: tensor<1x3x224x224xbf16>, %sw: tensor<64x3x7x7xbf16>,
                       %y: tensor<?x3x?x?xf32>, %yw: tensor<16x3x3x3xf32>,
                       %e: tensor<1x3x3x5xf32>)
    -> (tensor<2x8x4x4xf16>, tensor<1x64x112x112xbf16>, tensor<?x16x?x?xf32>,
        tensor<1x16x1x3xf32>) {
  // Depthwise (groups = channels), f16: ⌊(7 + 2 - 2 - 1) / 2⌋ + 1 = 4.
  // CHECK: grove.conv2d %[[D]], %[[DW]] {dilations = array<i64: 1, 1>, groups = 8 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x7x7xf16>, tensor<8x1x3x3xf16>) -> tensor<2x8x4x4xf16>
  // A ResNet stem, bf16: ⌊(224 + 6 - 6 - 1) / 2⌋ + 1 = 112.
  // CHECK: grove.conv2d %[[S]], %[[SW]] {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 3, 3, 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xbf16>, tensor<64x3x7x7xbf16>) -> tensor<1x64x112x112xbf16>
  // Dynamic batch and spatial sizes stay dynamic.
  // CHECK: grove.conv2d %[[Y]], %[[YW]] {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x3x?x?xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x?x?xf32>
  // A kernel exactly as tall as the input gives one row.
  // CHECK: grove.conv2d %[[E]], %[[YW]] {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x3x3x5xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x1x3xf32>
  %0 = grove.conv2d %d, %dw {groups = 8 : i64, padding = array<i64: 1, 1, 1, 1>,
                             strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>}
      : (tensor<2x8x7x7xf16>, tensor<8x1x3x3xf16>) -> tensor<2x8x4x4xf16>
  %1 = grove.conv2d %s, %sw {groups = 1 : i64, padding = array<i64: 3, 3, 3, 3>,
                             strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x224x224xbf16>, tensor<64x3x7x7xbf16>) -> tensor<1x64x112x112xbf16>
  %2 = grove.conv2d %y, %yw {groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>,
                             strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<?x3x?x?xf32>, tensor<16x3x3x3xf32>) -> tensor<?x16x?x?xf32>
  %3 = grove.conv2d %e, %yw {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                             strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
      : (tensor<1x3x3x5xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x1x3xf32>
  return %0, %1, %2, %3 : tensor<2x8x4x4xf16>, tensor<1x64x112x112xbf16>,
      tensor<?x16x?x?xf32>, tensor<1x16x1x3xf32>
}

// CHECK-LABEL: func.func @batch_norm
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x64x56x56xf32>, %[[P:[^:]*]]: tensor<64xf32>, %[[Y:[^:]*]]: tensor<?x10xf16>, %[[Q:[^:]*]]: tensor<10xf16>, %[[Z:[^:]*]]: tensor<2x4x?xbf16>, %[[R:[^:]*]]: tensor<4xbf16>
func.func @batch_norm(%x: tensor<?x64x56x56xf32>, %p: tensor<64xf32>,
                      %y: tensor<?x10xf16>, %q: tensor<10xf16>,
                      %z: tensor<2x4x?xbf16>, %r: tensor<4xbf16>)
    -> (tensor<?x64x56x56xf32>, tensor<?x10xf16>, tensor<2x4x?xbf16>) {
  // CHECK: grove.batch_norm %[[X]], %[[P]], %[[P]], %[[P]], %[[P]] {epsilon = 1.000000e-05 : f64} : (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x64x56x56xf32>
  // Rank 2 (after a linear layer); a zero epsilon is allowed.
  // CHECK: grove.batch_norm %[[Y]], %[[Q]], %[[Q]], %[[Q]], %[[Q]] {epsilon = 0.000000e+00 : f64} : (tensor<?x10xf16>, tensor<10xf16>, tensor<10xf16>, tensor<10xf16>, tensor<10xf16>) -> tensor<?x10xf16>
  // Rank 3, dynamic trailing dimension.
  // CHECK: grove.batch_norm %[[Z]], %[[R]], %[[R]], %[[R]], %[[R]] {epsilon = 1.000000e-03 : f64} : (tensor<2x4x?xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<2x4x?xbf16>
  %0 = grove.batch_norm %x, %p, %p, %p, %p {epsilon = 1.0e-05 : f64}
      : (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>,
         tensor<64xf32>) -> tensor<?x64x56x56xf32>
  %1 = grove.batch_norm %y, %q, %q, %q, %q {epsilon = 0.0 : f64}
      : (tensor<?x10xf16>, tensor<10xf16>, tensor<10xf16>, tensor<10xf16>,
         tensor<10xf16>) -> tensor<?x10xf16>
  %2 = grove.batch_norm %z, %r, %r, %r, %r {epsilon = 1.0e-03 : f64}
      : (tensor<2x4x?xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>,
         tensor<4xbf16>) -> tensor<2x4x?xbf16>
  return %0, %1, %2 : tensor<?x64x56x56xf32>, tensor<?x10xf16>, tensor<2x4x?xbf16>
}

// Pool output sizes are ⌊(H + pt + pb - k) / s⌋ + 1, or with ceil_mode the
// ceiling, less one when that last window would start at or after
// H + pt (PyTorch), checked against torch.nn.functional.max_pool2d and
// avg_pool2d.

// CHECK-LABEL: func.func @max_pool2d
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x64x112x112xf32>, %[[C:[^:]*]]: tensor<1x2x5x6xf32>, %[[A:[^:]*]]: tensor<1x4x7x8xf16>, %[[D:[^:]*]]: tensor<?x?x?x?xbf16>
func.func @max_pool2d(%x: tensor<?x64x112x112xf32>, %c: tensor<1x2x5x6xf32>,
                      %a: tensor<1x4x7x8xf16>, %d: tensor<?x?x?x?xbf16>)
    -> (tensor<?x64x56x56xf32>, tensor<1x2x3x4xf32>, tensor<1x2x2x3xf32>,
        tensor<1x2x3x3xf32>, tensor<1x4x3x8xf16>, tensor<?x?x?x?xbf16>) {
  // ResNet: ⌊(112 + 2 - 3) / 2⌋ + 1 = 56.
  // CHECK: grove.max_pool2d %[[X]] {kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x64x112x112xf32>) -> tensor<?x64x56x56xf32>
  // ceil_mode, k 2, s 2, padding 1. Height 5: ⌈(5 + 2 - 2) / 2⌉ + 1 = 4, but
  // the fourth window would start at 3·2 = 6 >= 5 + 1, in the bottom padding,
  // so 3. Width 6: ⌈6 / 2⌉ + 1 = 4, and 3·2 = 6 < 6 + 1 keeps it.
  // CHECK: grove.max_pool2d %[[C]] {ceil_mode, kernel = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x5x6xf32>) -> tensor<1x2x3x4xf32>
  // No padding, floor: ⌊3 / 2⌋ + 1 = 2, ⌊4 / 2⌋ + 1 = 3.
  // CHECK: grove.max_pool2d %[[C]] {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x5x6xf32>) -> tensor<1x2x2x3xf32>
  // ceil_mode without padding: ⌈3 / 2⌉ + 1 = 3 and ⌈4 / 2⌉ + 1 = 3.
  // CHECK: grove.max_pool2d %[[C]] {ceil_mode, kernel = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x2x5x6xf32>) -> tensor<1x2x3x3xf32>
  // Asymmetric kernel, strides and padding [top 1, left 0, bottom 0, right 1]:
  // ⌊(7 + 1 - 3) / 2⌋ + 1 = 3, ⌊(8 + 1 - 2) / 1⌋ + 1 = 8.
  // CHECK: grove.max_pool2d %[[A]] {kernel = array<i64: 3, 2>, padding = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 1>} : (tensor<1x4x7x8xf16>) -> tensor<1x4x3x8xf16>
  // All dynamic.
  // CHECK: grove.max_pool2d %[[D]] {ceil_mode, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16>
  %0 = grove.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                            padding = array<i64: 1, 1, 1, 1>}
      : (tensor<?x64x112x112xf32>) -> tensor<?x64x56x56xf32>
  %1 = grove.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 1, 1, 1, 1>, ceil_mode}
      : (tensor<1x2x5x6xf32>) -> tensor<1x2x3x4xf32>
  %2 = grove.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<1x2x5x6xf32>) -> tensor<1x2x2x3xf32>
  %3 = grove.max_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>, ceil_mode}
      : (tensor<1x2x5x6xf32>) -> tensor<1x2x3x3xf32>
  %4 = grove.max_pool2d %a {kernel = array<i64: 3, 2>, strides = array<i64: 2, 1>,
                            padding = array<i64: 1, 0, 0, 1>}
      : (tensor<1x4x7x8xf16>) -> tensor<1x4x3x8xf16>
  %5 = grove.max_pool2d %d {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                            padding = array<i64: 1, 1, 1, 1>, ceil_mode}
      : (tensor<?x?x?x?xbf16>) -> tensor<?x?x?x?xbf16>
  return %0, %1, %2, %3, %4, %5 : tensor<?x64x56x56xf32>, tensor<1x2x3x4xf32>,
      tensor<1x2x2x3xf32>, tensor<1x2x3x3xf32>, tensor<1x4x3x8xf16>,
      tensor<?x?x?x?xbf16>
}

// CHECK-LABEL: func.func @avg_pool2d
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x64x56x56xf32>, %[[C:[^:]*]]: tensor<1x2x5x6xf32>, %[[A:[^:]*]]: tensor<1x3x5x5xbf16>, %[[K:[^:]*]]: tensor<2x3x9x7xf16>
func.func @avg_pool2d(%x: tensor<?x64x56x56xf32>, %c: tensor<1x2x5x6xf32>,
                      %a: tensor<1x3x5x5xbf16>, %k: tensor<2x3x9x7xf16>)
    -> (tensor<?x64x28x28xf32>, tensor<?x64x56x56xf32>, tensor<1x2x3x4xf32>,
        tensor<1x3x3x3xbf16>, tensor<2x3x5x7xf16>) {
  // CHECK: grove.avg_pool2d %[[X]] {kernel = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x64x56x56xf32>) -> tensor<?x64x28x28xf32>
  // CHECK: grove.avg_pool2d %[[X]] {count_include_pad, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<?x64x56x56xf32>) -> tensor<?x64x56x56xf32>
  // As max_pool2d: the last window of the height would start in the padding.
  // CHECK: grove.avg_pool2d %[[C]] {ceil_mode, count_include_pad, kernel = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x2x5x6xf32>) -> tensor<1x2x3x4xf32>
  // Padding only at the top and left, ceil_mode: ⌈(5 + 1 - 3) / 2⌉ + 1 = 3
  // (the last window starts at 4 < 5 + 1), where the floor would give 2.
  // CHECK: grove.avg_pool2d %[[A]] {ceil_mode, kernel = array<i64: 3, 3>, padding = array<i64: 1, 1, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x5x5xbf16>) -> tensor<1x3x3x3xbf16>
  // Padding may be half of each kernel dimension: kernel 5x3, padding [2, 1, 2, 1].
  // CHECK: grove.avg_pool2d %[[K]] {count_include_pad, kernel = array<i64: 5, 3>, padding = array<i64: 2, 1, 2, 1>, strides = array<i64: 2, 1>} : (tensor<2x3x9x7xf16>) -> tensor<2x3x5x7xf16>
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 0, 0, 0, 0>}
      : (tensor<?x64x56x56xf32>) -> tensor<?x64x28x28xf32>
  %1 = grove.avg_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 1, 1>,
                            padding = array<i64: 1, 1, 1, 1>, count_include_pad}
      : (tensor<?x64x56x56xf32>) -> tensor<?x64x56x56xf32>
  %2 = grove.avg_pool2d %c {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>,
                            padding = array<i64: 1, 1, 1, 1>, ceil_mode,
                            count_include_pad}
      : (tensor<1x2x5x6xf32>) -> tensor<1x2x3x4xf32>
  %3 = grove.avg_pool2d %a {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>,
                            padding = array<i64: 1, 1, 0, 0>, ceil_mode}
      : (tensor<1x3x5x5xbf16>) -> tensor<1x3x3x3xbf16>
  %4 = grove.avg_pool2d %k {kernel = array<i64: 5, 3>, strides = array<i64: 2, 1>,
                            padding = array<i64: 2, 1, 2, 1>, count_include_pad}
      : (tensor<2x3x9x7xf16>) -> tensor<2x3x5x7xf16>
  return %0, %1, %2, %3, %4 : tensor<?x64x28x28xf32>, tensor<?x64x56x56xf32>,
      tensor<1x2x3x4xf32>, tensor<1x3x3x3xbf16>, tensor<2x3x5x7xf16>
}

// CHECK-LABEL: func.func @global_avg_pool
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x2048x7x7xf32>, %[[H:[^:]*]]: tensor<2x8x1x1xf16>, %[[D:[^:]*]]: tensor<1x8x?x?xbf16>
func.func @global_avg_pool(%x: tensor<?x2048x7x7xf32>, %h: tensor<2x8x1x1xf16>,
                           %d: tensor<1x8x?x?xbf16>)
    -> (tensor<?x2048x1x1xf32>, tensor<2x8x1x1xf16>, tensor<1x8x1x1xbf16>) {
  // CHECK: grove.global_avg_pool %[[X]] : (tensor<?x2048x7x7xf32>) -> tensor<?x2048x1x1xf32>
  // CHECK: grove.global_avg_pool %[[H]] : (tensor<2x8x1x1xf16>) -> tensor<2x8x1x1xf16>
  // CHECK: grove.global_avg_pool %[[D]] : (tensor<1x8x?x?xbf16>) -> tensor<1x8x1x1xbf16>
  %0 = grove.global_avg_pool %x : (tensor<?x2048x7x7xf32>) -> tensor<?x2048x1x1xf32>
  %1 = grove.global_avg_pool %h : (tensor<2x8x1x1xf16>) -> tensor<2x8x1x1xf16>
  %2 = grove.global_avg_pool %d : (tensor<1x8x?x?xbf16>) -> tensor<1x8x1x1xbf16>
  return %0, %1, %2 : tensor<?x2048x1x1xf32>, tensor<2x8x1x1xf16>, tensor<1x8x1x1xbf16>
}

// CHECK-LABEL: func.func @flatten
// CHECK-SAME: %[[P:[^:]*]]: tensor<?x2048x1x1xf32>, %[[X:[^:]*]]: tensor<2x3x4x5xf32>, %[[D:[^:]*]]: tensor<2x?x4xbf16>, %[[I:[^:]*]]: tensor<7xi1>, %[[L:[^:]*]]: tensor<3x2xi64>
func.func @flatten(%p: tensor<?x2048x1x1xf32>, %x: tensor<2x3x4x5xf32>,
                   %d: tensor<2x?x4xbf16>, %i: tensor<7xi1>, %l: tensor<3x2xi64>)
    -> (tensor<?x2048xf32>, tensor<2x60xf32>, tensor<2x3x20xf32>, tensor<120xf32>,
        tensor<2x3x4x5xf32>, tensor<2x?xbf16>, tensor<?xbf16>, tensor<7xi1>,
        tensor<3x2xi64>) {
  // CHECK: grove.flatten %[[P]] {axis = 1 : i64} : (tensor<?x2048x1x1xf32>) -> tensor<?x2048xf32>
  // CHECK: grove.flatten %[[X]] {axis = 1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x60xf32>
  // CHECK: grove.flatten %[[X]] {axis = -2 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x20xf32>
  // CHECK: grove.flatten %[[X]] {axis = 0 : i64} : (tensor<2x3x4x5xf32>) -> tensor<120xf32>
  // CHECK: grove.flatten %[[X]] {axis = -1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  // One dynamic dimension may be collapsed.
  // CHECK: grove.flatten %[[D]] {axis = 1 : i64} : (tensor<2x?x4xbf16>) -> tensor<2x?xbf16>
  // CHECK: grove.flatten %[[D]] {axis = -3 : i64} : (tensor<2x?x4xbf16>) -> tensor<?xbf16>
  // CHECK: grove.flatten %[[I]] {axis = 0 : i64} : (tensor<7xi1>) -> tensor<7xi1>
  // CHECK: grove.flatten %[[L]] {axis = -1 : i64} : (tensor<3x2xi64>) -> tensor<3x2xi64>
  %0 = grove.flatten %p {axis = 1 : i64} : (tensor<?x2048x1x1xf32>) -> tensor<?x2048xf32>
  %1 = grove.flatten %x {axis = 1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x60xf32>
  %2 = grove.flatten %x {axis = -2 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x20xf32>
  %3 = grove.flatten %x {axis = 0 : i64} : (tensor<2x3x4x5xf32>) -> tensor<120xf32>
  %4 = grove.flatten %x {axis = -1 : i64} : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  %5 = grove.flatten %d {axis = 1 : i64} : (tensor<2x?x4xbf16>) -> tensor<2x?xbf16>
  %6 = grove.flatten %d {axis = -3 : i64} : (tensor<2x?x4xbf16>) -> tensor<?xbf16>
  %7 = grove.flatten %i {axis = 0 : i64} : (tensor<7xi1>) -> tensor<7xi1>
  %8 = grove.flatten %l {axis = -1 : i64} : (tensor<3x2xi64>) -> tensor<3x2xi64>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : tensor<?x2048xf32>, tensor<2x60xf32>,
      tensor<2x3x20xf32>, tensor<120xf32>, tensor<2x3x4x5xf32>, tensor<2x?xbf16>,
      tensor<?xbf16>, tensor<7xi1>, tensor<3x2xi64>
}

// Split attention: radix 2 with cardinality 2, and radix 1 (a sigmoid) on a dynamic batch in bf16.
// CHECK-LABEL: func.func @split_attention
// CHECK: grove.split_attention %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {cardinality = 2 : i64, epsilon = 1.000000e-05 : f64, radix = 2 : i64} : (tensor<2x16x5x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x2x1x1xf32>, tensor<16xf32>) -> tensor<2x8x5x3xf32>
func.func @split_attention(%u: tensor<2x16x5x3xf32>, %w1: tensor<4x4x1x1xf32>, %b1: tensor<4xf32>, %s: tensor<4xf32>, %sh: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %w2: tensor<16x2x1x1xf32>, %b2: tensor<16xf32>) -> tensor<2x8x5x3xf32> {
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 2 : i64, cardinality = 2 : i64, epsilon = 1.0e-05 : f64}
      : (tensor<2x16x5x3xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<16x2x1x1xf32>, tensor<16xf32>) -> tensor<2x8x5x3xf32>
  return %0 : tensor<2x8x5x3xf32>
}

// CHECK-LABEL: func.func @split_attention_radix1
// CHECK: grove.split_attention {{.*}} {cardinality = 1 : i64, epsilon = 1.000000e-03 : f64, radix = 1 : i64} : (tensor<?x8x?x?xbf16>, {{.*}}) -> tensor<?x8x?x?xbf16>
func.func @split_attention_radix1(%u: tensor<?x8x?x?xbf16>, %w1: tensor<4x8x1x1xbf16>, %b1: tensor<4xbf16>, %s: tensor<4xbf16>, %sh: tensor<4xbf16>, %m: tensor<4xbf16>, %v: tensor<4xbf16>, %w2: tensor<8x4x1x1xbf16>, %b2: tensor<8xbf16>) -> tensor<?x8x?x?xbf16> {
  %0 = grove.split_attention %u, %w1, %b1, %s, %sh, %m, %v, %w2, %b2
      {radix = 1 : i64, cardinality = 1 : i64, epsilon = 1.0e-03 : f64}
      : (tensor<?x8x?x?xbf16>, tensor<4x8x1x1xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<8x4x1x1xbf16>, tensor<8xbf16>) -> tensor<?x8x?x?xbf16>
  return %0 : tensor<?x8x?x?xbf16>
}

// ceil_mode lets a window overhang the input by less than a stride, the
// first one too (PyTorch): a 2x2 window with stride 2 over 1x1 gives 1x1.
// CHECK-LABEL: func.func @pool_ceil_mode_overhang
// CHECK: grove.avg_pool2d %{{.*}} {ceil_mode, kernel = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<?x4x1x1xf32>) -> tensor<?x4x1x1xf32>
func.func @pool_ceil_mode_overhang(%x: tensor<?x4x1x1xf32>) -> tensor<?x4x1x1xf32> {
  %0 = grove.avg_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>, ceil_mode} : (tensor<?x4x1x1xf32>) -> tensor<?x4x1x1xf32>
  return %0 : tensor<?x4x1x1xf32>
}
