// RUN: grove-opt %s -split-input-file --grove-autocast='compute=bf16' | FileCheck %s
// RUN: grove-opt %s -split-input-file --grove-autocast | FileCheck %s --check-prefix=NONE

// grove-autocast (Autocast.cpp) under the pass option's bf16 policy. The
// matmul (AutocastLow) narrows its f32 operands and result; relu
// (AutocastFollow) stays in bf16; the add with an f32 bias computes in the
// wider f32; softmax (AutocastWide) gets its operand back in f32; the
// return sees the type the function was written with.
// CHECK-LABEL: func.func @dense
// CHECK-SAME: -> (tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK: %[[X:.*]] = grove.convert %arg0 : tensor<4x8xf32> -> tensor<4x8xbf16>
// CHECK: %[[W:.*]] = grove.convert %arg1 : tensor<8x3xf32> -> tensor<8x3xbf16>
// CHECK: %[[H:.*]] = grove.matmul %[[X]], %[[W]] : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
// CHECK: %[[R:.*]] = grove.relu %[[H]] : tensor<4x3xbf16>
// CHECK: %[[RW:.*]] = grove.convert %[[R]] : tensor<4x3xbf16> -> tensor<4x3xf32>
// CHECK: %[[Z:.*]] = grove.add %[[RW]], %arg2 : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK: %[[P:.*]] = grove.softmax %[[Z]] {axis = 1 : i64} : tensor<4x3xf32>
// CHECK: %[[RR:.*]] = grove.convert %[[R]] : tensor<4x3xbf16> -> tensor<4x3xf32>
// CHECK: return %[[P]], %[[RR]]
// NONE-LABEL: func.func @dense
// NONE-NOT: grove.convert
// NONE: // -----
func.func @dense(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %b: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %h = grove.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %r = grove.relu %h : tensor<4x3xf32>
  %z = grove.add %r, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %p = grove.softmax %z {axis = 1 : i64} : tensor<4x3xf32>
  return %p, %r : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// Data movement follows its operand; an op with no autocast trait (here a
// state write) sees the type it was written with; f64 stays f64.
// CHECK-LABEL: func.func @moves
// CHECK: %[[H:.*]] = grove.matmul {{.*}} -> tensor<2x6xbf16>
// CHECK: %[[T:.*]] = grove.reshape %[[H]] : tensor<2x6xbf16> -> tensor<2x2x3xbf16>
// CHECK: %[[TT:.*]] = grove.transpose %[[T]] [0, 2, 1] : tensor<2x2x3xbf16> -> tensor<2x3x2xbf16>
// CHECK: %[[W:.*]] = grove.convert %[[TT]] : tensor<2x3x2xbf16> -> tensor<2x3x2xf32>
// CHECK: grove.set_param @s = %[[W]] : tensor<2x3x2xf32>
// CHECK: grove.matmul %arg2, %arg2 : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
grove.param @s : tensor<2x3x2xf32>
func.func @moves(%x: tensor<2x4xf32>, %w: tensor<4x6xf32>, %d: tensor<2x2xf64>) -> tensor<2x2xf64> {
  %h = grove.matmul %x, %w : (tensor<2x4xf32>, tensor<4x6xf32>) -> tensor<2x6xf32>
  %t = grove.reshape %h : tensor<2x6xf32> -> tensor<2x2x3xf32>
  %tt = grove.transpose %t [0, 2, 1] : tensor<2x2x3xf32> -> tensor<2x3x2xf32>
  grove.set_param @s = %tt : tensor<2x3x2xf32>
  %dd = grove.matmul %d, %d : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  return %dd : tensor<2x2xf64>
}

// -----

// A function's own policy wins over the pass option's; the module's too.
// CHECK-LABEL: func.func @own
// CHECK: grove.matmul {{.*}} -> tensor<2x2xf16>
// CHECK-LABEL: func.func @option
// CHECK: grove.matmul {{.*}} -> tensor<2x2xbf16>
func.func @own(%x: tensor<2x2xf32>) -> tensor<2x2xf32> attributes {grove.autocast = #grove.autocast<compute = f16>} {
  %h = grove.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %h : tensor<2x2xf32>
}
func.func @option(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %h = grove.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %h : tensor<2x2xf32>
}

// -----

// CHECK-NOT: grove.autocast
// CHECK-LABEL: func.func @mod
// CHECK: grove.matmul {{.*}} -> tensor<2x2xf16>
// NONE: grove.matmul {{.*}} -> tensor<2x2xf16>
module attributes {grove.autocast = #grove.autocast<compute = f16>} {
  func.func @mod(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
    %h = grove.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    return %h : tensor<2x2xf32>
  }
}

// -----

// Inside grove.value_and_grad: the param is converted where the matmul
// reads it (autodiff then carries an f32 gradient back through the
// convert); the loss, an AutocastWide op, is f32 and so is the yield.
// CHECK-LABEL: func.func @step
// CHECK: grove.value_and_grad [@w] {
// CHECK: %[[W:.*]] = grove.get_param @w : tensor<8x3xf32>
// CHECK: %[[WB:.*]] = grove.convert %[[W]] : tensor<8x3xf32> -> tensor<8x3xbf16>
// CHECK: %[[H:.*]] = grove.matmul %{{.*}}, %[[WB]] : {{.*}} -> tensor<4x3xbf16>
// CHECK: %[[HW:.*]] = grove.convert %[[H]] : tensor<4x3xbf16> -> tensor<4x3xf32>
// CHECK: %[[L:.*]] = grove.softmax_cross_entropy %[[HW]], %arg1
// CHECK: grove.yield %[[L]] : tensor<f32>
// CHECK: } : tensor<f32>, tensor<8x3xf32>
// CHECK: grove.sgd [@w](%{{.*}}) : tensor<8x3xf32>
// CHECK-NOT: loss_scale
grove.param @w : tensor<8x3xf32>
func.func @step(%x: tensor<4x8xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  %l, %g = grove.value_and_grad [@w] {
    %w = grove.get_param @w : tensor<8x3xf32>
    %h = grove.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    %c = grove.softmax_cross_entropy %h, %y : (tensor<4x3xf32>, tensor<4xi32>) -> tensor<f32>
    grove.yield %c : tensor<f32>
  } : tensor<f32>, tensor<8x3xf32>
  grove.sgd [@w] (%g) : tensor<8x3xf32>
  return %l : tensor<f32>
}

// -----

// A region op's body is not cast: a narrowed value it reads from above is
// converted back before the op.
// CHECK-LABEL: func.func @region
// CHECK: %[[H:.*]] = grove.matmul {{.*}} -> tensor<2x2xbf16>
// CHECK: %[[W:.*]] = grove.convert %[[H]] : tensor<2x2xbf16> -> tensor<2x2xf32>
// CHECK: scf.if
// CHECK: grove.relu %[[W]] : tensor<2x2xf32>
func.func @region(%x: tensor<2x2xf32>, %c: i1) -> tensor<2x2xf32> {
  %h = grove.matmul %x, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = scf.if %c -> tensor<2x2xf32> {
    %a = grove.relu %h : tensor<2x2xf32>
    scf.yield %a : tensor<2x2xf32>
  } else {
    scf.yield %x : tensor<2x2xf32>
  }
  return %r : tensor<2x2xf32>
}
