// RUN: grove-opt %s -split-input-file --grove-params-to-arguments | FileCheck %s

// grove-params-to-arguments (ParamsToArguments.cpp): every defined function
// gains one leading argument per grove.param, in declaration order.

// Declaration order, not use order; each get_param (even repeated) becomes
// the argument; calls between defined functions forward the caller's state
// ahead of their own operands; declarations keep their signature.
// CHECK-LABEL: module @m {
// CHECK-NOT: grove.param
// CHECK: func.func @forward(%[[B:.*]]: tensor<4xf32> {bufferization.writable = false, grove.param = "b"}, %[[A:.*]]: tensor<2x4xf16> {bufferization.writable = false, grove.param = "a"}, %[[X:.*]]: tensor<4xf32> {grove.name = "x"}) -> tensor<4xf32> {
// CHECK-NOT: grove.get_param
// CHECK-NEXT: %[[H:.*]] = call @helper(%[[B]], %[[A]], %[[X]], %[[B]]) : (tensor<4xf32>, tensor<2x4xf16>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[E:.*]] = call @ext(%[[H]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return %[[E]]
// CHECK: func.func private @helper(%[[HB:.*]]: tensor<4xf32> {bufferization.writable = false, grove.param = "b"}, %{{.*}}: tensor<2x4xf16> {bufferization.writable = false, grove.param = "a"}, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: return %[[HB]] : tensor<4xf32>
// CHECK: func.func private @ext(tensor<4xf32>) -> tensor<4xf32>{{$}}
// CHECK-NOT: grove.
module @m {
  grove.param @b : tensor<4xf32>
  grove.param @a : tensor<2x4xf16>
  func.func @forward(%x: tensor<4xf32> {grove.name = "x"}) -> tensor<4xf32> {
    %a = grove.get_param @a : tensor<2x4xf16>
    %b = grove.get_param @b : tensor<4xf32>
    %b2 = grove.get_param @b : tensor<4xf32>
    %0 = func.call @helper(%x, %b2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %1 = func.call @ext(%0) : (tensor<4xf32>) -> tensor<4xf32>
    return %1 : tensor<4xf32>
  }
  func.func private @helper(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %b = grove.get_param @b : tensor<4xf32>
    return %b : tensor<4xf32>
  }
  func.func private @ext(%x: tensor<4xf32>) -> tensor<4xf32>
}

// -----

// get_param and calls inside nested regions are rewritten too; a
// recursive call forwards the function's own state.
// CHECK-LABEL: func.func @nested
// CHECK-SAME: (%[[W:.*]]: tensor<4xf32> {bufferization.writable = false, grove.param = "w"}, %[[C:.*]]: i1, %[[X:.*]]: tensor<4xf32>)
// CHECK: scf.if %[[C]]
// CHECK-NEXT: %[[R:.*]] = func.call @nested(%[[W]], %[[C]], %[[W]])
// CHECK-NEXT: scf.yield %[[R]]
// CHECK: scf.yield %[[X]]
grove.param @w : tensor<4xf32>
func.func @nested(%c: i1, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = scf.if %c -> tensor<4xf32> {
    %w = grove.get_param @w : tensor<4xf32>
    %y = func.call @nested(%c, %w) : (i1, tensor<4xf32>) -> tensor<4xf32>
    scf.yield %y : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Without params nothing changes.
// CHECK-LABEL: func.func @stateless
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[R:.*]] = call @inner(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: func.func private @inner(%{{.*}}: tensor<4xf32>) -> tensor<4xf32> {
func.func @stateless(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @inner(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @inner(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Functions that read no param still take all of them (one calling
// convention for every function).
// CHECK-LABEL: func.func @unused_state
// CHECK-SAME: (%{{.*}}: tensor<3xi32> {bufferization.writable = false, grove.param = "steps"}, %{{.*}}: tensor<2xf32> {bufferization.writable = false, grove.param = "w"}, %[[X:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: return %[[X]]
grove.param @steps : tensor<3xi32>
grove.param @w : tensor<2xf32>
func.func @unused_state(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
