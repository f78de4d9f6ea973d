// RUN: grove-opt %s -split-input-file --grove-prepare-abi | FileCheck %s
// RUN: grove-opt %s -split-input-file --grove-prepare-abi=module-name=mylib | FileCheck %s --check-prefix=NAMED

// grove-prepare-abi (PrepareABI.cpp): the typed descriptor, the module
// attributes, and the renaming of public functions. Diagnostics are in
// prepare-abi-invalid.mlir.

// The full descriptor: params in declaration order, one #grove.abi_entry per
// public definition with its arguments (here inputs only) and
// outputs (their tensor types), names from grove.name
// or argN / outN.
// CHECK-LABEL: module @net attributes {
// CHECK-SAME: grove.abi.model = #grove.abi_model<module = "net", target = "host", state = [#grove.abi_state<name = "fc.weight", type = tensor<4x8xf32>>, #grove.abi_state<name = "fc.bias", type = tensor<4xi32>>], entries = [#grove.abi_entry<name = "forward", args = [#grove.abi_tensor<name = "x", type = tensor<?x8xf32>>, #grove.abi_tensor<name = "arg1", type = tensor<2x?xbf16>>], outputs = [#grove.abi_tensor<name = "logits", type = tensor<?x8xf32>>, #grove.abi_tensor<name = "out1", type = tensor<i8>>]>, #grove.abi_entry<name = "eval", args = [#grove.abi_tensor<name = "arg0", type = tensor<3xf16>>, #grove.abi_tensor<name = "arg1", type = tensor<1xi1>>, #grove.abi_tensor<name = "arg2", type = tensor<1xi16>>, #grove.abi_tensor<name = "arg3", type = tensor<1xi32>>, #grove.abi_tensor<name = "arg4", type = tensor<1xi64>>], outputs = [#grove.abi_tensor<name = "out0", type = tensor<2xf64>>]>]>
// CHECK-SAME: grove.abi.module = "net"
// The params are in the descriptor now: their declarations are gone.
// CHECK-NOT: grove.param
// Entry points keep their argument and result attributes.
// Inputs are borrowed: bufferization may not write them in place.
// CHECK: func.func @_grove_net_forward(%{{.*}}: tensor<?x8xf32> {bufferization.writable = false, grove.name = "x"}, %{{.*}}: tensor<2x?xbf16> {bufferization.writable = false}) -> (tensor<?x8xf32> {grove.name = "logits"}, tensor<i8>)
// CHECK-SAME: attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 2 : i64, grove.abi.name = "forward", llvm.emit_c_interface}
// Private functions and declarations are not entry points.
// CHECK: func.func private @helper(%{{.*}}: tensor<2xf64>) -> tensor<2xf64> {
// CHECK: func.func private @decl(tensor<4xf32>) -> tensor<4xf32>{{$}}
// CHECK: func.func @_grove_net_eval(
// CHECK-SAME: attributes {grove.abi.entry = 1 : i64, grove.abi.inputs = 5 : i64, grove.abi.name = "eval", llvm.emit_c_interface}
// CHECK: call @helper(
// CHECK-NOT: func.func @forward
// CHECK-NOT: func.func @eval

// NAMED-LABEL: module @net attributes {
// NAMED-SAME: grove.abi.model = #grove.abi_model<module = "mylib", target = "host", state = [#grove.abi_state
// NAMED-SAME: grove.abi.module = "mylib"
// NAMED: func.func @_grove_mylib_forward(
// NAMED-SAME: grove.abi.name = "forward"
// NAMED: func.func private @helper(
// NAMED: func.func @_grove_mylib_eval(
// NAMED-SAME: grove.abi.name = "eval"
module @net {
  grove.param @fc.weight : tensor<4x8xf32>
  grove.param @fc.bias : tensor<4xi32>
  func.func @forward(%x: tensor<?x8xf32> {grove.name = "x"}, %y: tensor<2x?xbf16>)
      -> (tensor<?x8xf32> {grove.name = "logits"}, tensor<i8>) {
    %c = grove.constant dense<1> : tensor<i8>
    return %x, %c : tensor<?x8xf32>, tensor<i8>
  }
  func.func private @helper(%x: tensor<2xf64>) -> tensor<2xf64> {
    return %x : tensor<2xf64>
  }
  func.func private @decl(%x: tensor<4xf32>) -> tensor<4xf32>
  func.func @eval(%a: tensor<3xf16>, %b: tensor<1xi1>, %c: tensor<1xi16>,
                  %d: tensor<1xi32>, %e: tensor<1xi64>) -> tensor<2xf64> {
    %k = grove.constant dense<1.0> : tensor<2xf64>
    %h = func.call @helper(%k) : (tensor<2xf64>) -> tensor<2xf64>
    return %h : tensor<2xf64>
  }
}

// -----

// A module without a name is `model`, unless module-name says otherwise.
// Entries without arguments or results have no input / output lines.
// CHECK-LABEL: module attributes {
// CHECK-SAME: grove.abi.model = #grove.abi_model<module = "model", target = "host", state = [], entries = [#grove.abi_entry<name = "sink", args = [#grove.abi_tensor<name = "arg0", type = tensor<4xf32>>], outputs = []>, #grove.abi_entry<name = "source", args = [], outputs = [#grove.abi_tensor<name = "out0", type = tensor<4xf32>>]>]>
// CHECK-SAME: grove.abi.module = "model"
// CHECK: func.func @_grove_model_sink(%{{.*}}: tensor<4xf32> {bufferization.writable = false}) attributes {grove.abi.entry = 0 : i64, grove.abi.inputs = 1 : i64, grove.abi.name = "sink", llvm.emit_c_interface}
// CHECK: func.func @_grove_model_source() -> tensor<4xf32> attributes {grove.abi.entry = 1 : i64, grove.abi.inputs = 0 : i64, grove.abi.name = "source", llvm.emit_c_interface}

// NAMED-LABEL: module attributes {
// NAMED-SAME: grove.abi.model = #grove.abi_model<module = "mylib", target = "host", state = [], entries = [#grove.abi_entry<name = "sink"
// NAMED-SAME: grove.abi.module = "mylib"
// NAMED: func.func @_grove_mylib_sink(
// NAMED: func.func @_grove_mylib_source(
func.func @sink(%x: tensor<4xf32>) {
  return
}
func.func @source() -> tensor<4xf32> {
  %c = grove.constant dense<1.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// Calls to a renamed entry point follow the rename (a call to a function
// without a body is an error: prepare-abi-invalid.mlir); an entry another
// function calls is marked grove.abi.called (its inputs do not all pass the
// runtime's checks), the caller is not.
// CHECK-LABEL: module @calls attributes {
// CHECK-SAME: grove.abi.model = #grove.abi_model<module = "calls", target = "host", state = [], entries = [#grove.abi_entry<name = "outer", args = [#grove.abi_tensor<name = "arg0", type = tensor<4xf32>>], outputs = [#grove.abi_tensor<name = "out0", type = tensor<4xf32>>]>, #grove.abi_entry<name = "inner", args = [#grove.abi_tensor<name = "arg0", type = tensor<4xf32>>], outputs = [#grove.abi_tensor<name = "out0", type = tensor<4xf32>>]>]>
// CHECK: func.func @_grove_calls_outer(%[[X:.*]]: tensor<4xf32> {bufferization.writable = false})
// CHECK-NOT: grove.abi.called
// CHECK-SAME: grove.abi.entry = 0 : i64
// CHECK: %[[R:.*]] = call @_grove_calls_inner(%[[X]])
// CHECK: return %[[R]]
// CHECK: func.func @_grove_calls_inner(
// CHECK-SAME: grove.abi.called
// CHECK-SAME: grove.abi.entry = 1 : i64

// NAMED-LABEL: module @calls attributes {
// NAMED: func.func @_grove_mylib_outer(
// NAMED: call @_grove_mylib_inner(
// NAMED: func.func @_grove_mylib_inner(
module @calls {
  func.func @outer(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = func.call @inner(%x) : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func @inner(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// State (after grove-params-to-arguments): initialised state is a `state`
// line with its initialiser's bits; state arguments are `read`/`write`
// lines in argument order among the inputs, by their grove.state role; only
// state the function writes is writable in place; the input count leaves
// the state out.
// CHECK-LABEL: module @st attributes {
// CHECK-SAME: grove.abi.model = #grove.abi_model<module = "st", target = "host", state = [#grove.abi_state<name = "w", type = tensor<4xf32>>, #grove.abi_state<name = "m", type = tensor<4xf32>, init = 1065353216 : i64>, #grove.abi_state<name = "k", type = tensor<i64>, init = -3 : i64>, #grove.abi_state<name = "h", type = tensor<2xbf16>, init = 16320 : i64>, #grove.abi_state<name = "b", type = tensor<3xi1>, init = 1 : i64>], entries = [#grove.abi_entry<name = "step", args = [#grove.abi_state_arg<state = "m", access = write>, #grove.abi_state_arg<state = "w", access = read>, #grove.abi_tensor<name = "arg0", type = tensor<4xf32>>], outputs = [#grove.abi_tensor<name = "out0", type = tensor<4xf32>>]>]>
// CHECK-NOT: grove.param
// CHECK: func.func @_grove_st_step(%{{.*}}: tensor<4xf32> {bufferization.writable = true, grove.state = @m, grove.writes}, %{{.*}}: tensor<4xf32> {bufferization.writable = false, grove.state = @w}, %{{.*}}: tensor<4xf32> {bufferization.writable = false})
// CHECK-SAME: grove.abi.inputs = 1 : i64
module @st {
  grove.param @w : tensor<4xf32>
  grove.param @m : tensor<4xf32> = 1.0 : f32
  grove.param @k : tensor<i64> = -3 : i64
  grove.param @h : tensor<2xbf16> = 1.5 : bf16
  grove.param @b : tensor<3xi1> = true
  func.func @step(%m: tensor<4xf32> {grove.state = @m, grove.writes},
                  %w: tensor<4xf32> {grove.state = @w},
                  %x: tensor<4xf32>) -> tensor<4xf32> {
    %y = grove.add %m, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    grove.assign %x to %m : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}

// -----

// A bounded integer input (grove.below, set by grove-expand-training-ops on
// labels or by the user) ends its input line with `below N`; the attribute
// moves into the descriptor.
// CHECK-LABEL: module @bounded attributes {
// CHECK-SAME: grove.abi.model = #grove.abi_model<module = "bounded", target = "host", state = [], entries = [#grove.abi_entry<name = "pick", args = [#grove.abi_tensor<name = "arg0", type = tensor<4xf32>>, #grove.abi_tensor<name = "labels", type = tensor<?xi32>, preconditions = [#grove.below<bound = 10>]>], outputs = []>]>
// CHECK: func.func @_grove_bounded_pick(%{{.*}}: tensor<4xf32> {bufferization.writable = false}, %{{.*}}: tensor<?xi32> {bufferization.writable = false, grove.name = "labels"})
module @bounded {
  func.func @pick(%x: tensor<4xf32>, %y: tensor<?xi32> {grove.name = "labels", grove.below = 10 : i64}) {
    return
  }
}
