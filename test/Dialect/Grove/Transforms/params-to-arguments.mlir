// RUN: grove-opt %s -split-input-file --grove-params-to-arguments | FileCheck %s

// grove-params-to-arguments (ParamsToArguments.cpp): every defined function
// gains one leading argument per grove.param it reads or writes (itself or
// through calls), in declaration order, each carrying its role.

// Declaration order, not use order; each get_param (even repeated) becomes
// the argument; calls between defined functions forward the state the
// callee uses ahead of their own operands; declarations keep their
// signature; the params stay for grove-prepare-abi.
// CHECK-LABEL: module @m {
// CHECK: grove.param @b
// CHECK: grove.param @a
// CHECK: grove.param @unused
// CHECK: func.func @forward(%[[B:.*]]: tensor<4xf32> {grove.state = @b}, %[[A:.*]]: tensor<2x4xf16> {grove.state = @a}, %[[X:.*]]: tensor<4xf32> {grove.name = "x"}) -> tensor<4xf32> {
// CHECK-NOT: grove.get_param
// CHECK-NEXT: %[[H:.*]] = call @helper(%[[B]], %[[X]], %[[B]]) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[E:.*]] = call @ext(%[[H]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: return %[[E]]
// CHECK: func.func private @helper(%[[HB:.*]]: tensor<4xf32> {grove.state = @b}, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: return %[[HB]] : tensor<4xf32>
// CHECK: func.func private @ext(tensor<4xf32>) -> tensor<4xf32>{{$}}
// CHECK-NOT: grove.state
module @m {
  grove.param @b : tensor<4xf32>
  grove.param @a : tensor<2x4xf16>
  grove.param @unused : tensor<3xi32>
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
// recursive reader forwards the function's own state.
// CHECK-LABEL: func.func @nested
// CHECK-SAME: (%[[W:.*]]: tensor<4xf32> {grove.state = @w}, %[[C:.*]]: i1, %[[X:.*]]: tensor<4xf32>)
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

// Without params nothing changes; a function that touches no state takes
// none.
// CHECK-LABEL: func.func @stateless
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[R:.*]] = call @inner(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: func.func private @inner(%{{.*}}: tensor<4xf32>) -> tensor<4xf32> {
grove.param @steps : tensor<3xi32>
func.func @stateless(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @inner(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @inner(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// A write: the argument is marked grove.writes; reads after the set see the
// value set; the one grove.assign of the final value comes last, after
// everything else (and so after every allocation); a read-only param stays
// read-only.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[M:.*]]: tensor<4xf32> {grove.state = @mean, grove.writes}, %[[S:.*]]: tensor<4xf32> {grove.state = @scale}, %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[N1:.*]] = grove.add %[[M]], %[[X]]
// CHECK-NEXT: %[[N2:.*]] = grove.mul %[[N1]], %[[S]]
// CHECK-NEXT: %[[Y:.*]] = grove.add %[[N2]], %[[M]]
// CHECK-NEXT: grove.assign %[[N2]] to %[[M]] : tensor<4xf32>
// CHECK-NEXT: return %[[Y]]
grove.param @mean : tensor<4xf32> = 0.0 : f32
grove.param @scale : tensor<4xf32>
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %m = grove.get_param @mean : tensor<4xf32>
  %n1 = grove.add %m, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  grove.set_param @mean = %n1 : tensor<4xf32>
  %s = grove.get_param @scale : tensor<4xf32>
  %m2 = grove.get_param @mean : tensor<4xf32>
  %n2 = grove.mul %m2, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  grove.set_param @mean = %n2 : tensor<4xf32>
  %y = grove.add %n2, %m : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// A call of a function that writes state is inlined (value semantics cannot
// carry the write out of the callee), through two levels; the callee's
// write lands on the caller's argument; reads before and after the call see
// the old and the new value.
// CHECK-LABEL: func.func @outer
// CHECK-SAME: (%[[C:.*]]: tensor<f32> {grove.state = @count, grove.writes}, %[[X:.*]]: tensor<f32>)
// CHECK-NOT: call @
// CHECK: %[[N:.*]] = grove.add %[[C]], %[[X]]
// CHECK: %[[Y:.*]] = grove.mul %[[C]], %[[N]]
// CHECK-NEXT: grove.assign %[[N]] to %[[C]]
// CHECK-NEXT: return %[[Y]]
// CHECK: func.func private @middle(%[[MC:.*]]: tensor<f32> {grove.state = @count, grove.writes}
// CHECK: func.func private @bump(%[[BC:.*]]: tensor<f32> {grove.state = @count, grove.writes}
grove.param @count : tensor<f32> = 0.0 : f32
func.func @outer(%x: tensor<f32>) -> tensor<f32> {
  %before = grove.get_param @count : tensor<f32>
  func.call @middle(%x) : (tensor<f32>) -> ()
  %after = grove.get_param @count : tensor<f32>
  %y = grove.mul %before, %after : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}
func.func private @middle(%x: tensor<f32>) {
  func.call @bump(%x) : (tensor<f32>) -> ()
  return
}
func.func private @bump(%x: tensor<f32>) {
  %c = grove.get_param @count : tensor<f32>
  %n = grove.add %c, %x : (tensor<f32>, tensor<f32>) -> tensor<f32>
  grove.set_param @count = %n : tensor<f32>
  return
}
