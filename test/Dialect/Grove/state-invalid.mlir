// RUN: grove-opt %s -split-input-file -verify-diagnostics

// One case per diagnostic of the state ops and of the ABI attributes the
// dialect declares (GroveOps.cpp, GroveDialect.cpp).

// expected-error @+1 {{'grove.param' op initial value must be a scalar of the element type 'f32' (got 1 : i32)}}
grove.param @m : tensor<4xf32> = 1 : i32

// -----

// expected-error @+1 {{'grove.param' op initial value must be a scalar of the element type 'f32' (got 1.000000e+00 : f64)}}
grove.param @m : tensor<4xf32> = 1.0 : f64

// -----

// A saved file with this name could never be loaded again.
// expected-error @+1 {{'grove.param' op name '__metadata__' is reserved by the safetensors format}}
grove.param @__metadata__ : tensor<4xf32>

// -----

grove.param @m : tensor<4xf32>
func.func @f(%x: tensor<2xf32>) {
  // expected-error @+1 {{'grove.set_param' op value type 'tensor<2xf32>' does not match the type of @m ('tensor<4xf32>')}}
  grove.set_param @m = %x : tensor<2xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.set_param' op references an undefined grove.param @nope}}
  grove.set_param @nope = %x : tensor<4xf32>
  return
}

// -----

grove.param @m : tensor<4xf32>
func.func @f(%c: i1, %x: tensor<4xf32>) {
  scf.if %c {
    // expected-error @+1 {{'grove.set_param' op expects parent op 'func.func'}}
    grove.set_param @m = %x : tensor<4xf32>
  }
  return
}

// -----

func.func @f(%s: tensor<4xf32> {grove.state = @m}, %x: tensor<4xf32>) {
  // expected-error @+1 {{'grove.assign' op expects a function argument marked grove.state and grove.writes as its state}}
  grove.assign %x to %s : tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  %y = grove.relu %x : tensor<4xf32>
  // expected-error @+1 {{'grove.assign' op expects a function argument marked grove.state and grove.writes}}
  grove.assign %x to %y : tensor<4xf32>
  return
}

// -----

grove.param @m : tensor<4xf32>
// expected-error @+1 {{argument 0 has type 'tensor<2xf32>' but @m is 'tensor<4xf32>'}}
func.func @f(%s: tensor<2xf32> {grove.state = @m}) {
  return
}

// -----

// expected-error @+1 {{'grove.state' of argument 0 must name a grove.param, got "m"}}
func.func @f(%s: tensor<2xf32> {grove.state = "m"}) {
  return
}

// -----

// expected-error @+1 {{'grove.writes' marks a grove.state argument (unit), not argument 0}}
func.func @f(%s: tensor<2xf32> {grove.writes}) {
  return
}

// -----

// expected-error @+1 {{unknown grove argument attribute 'grove.nmae'}}
func.func @f(%s: tensor<2xf32> {grove.nmae = "x"}) {
  return
}

// -----

// expected-error @+1 {{unknown grove result attribute 'grove.state'}}
func.func @f(%s: tensor<2xf32>) -> (tensor<2xf32> {grove.state = @m}) {
  return %s : tensor<2xf32>
}

// -----

// expected-error @+1 {{'grove.abi.entry' must be an integer, got "0"}}
func.func @f() attributes {grove.abi.entry = "0"} {
  return
}

// -----

// expected-error @+1 {{'grove.abi.equal_dims' must be quadruples (input, dim, earlier input, dim) of non-negative indices, got array<i64: 1, 0, 0>}}
func.func @f() attributes {grove.abi.equal_dims = array<i64: 1, 0, 0>} {
  return
}

// -----

// expected-error @+1 {{'grove.noalias_args' must be an array of argument indices, got [2]}}
func.func @f() attributes {grove.noalias_args = [2]} {
  return
}

// -----

// expected-error @+1 {{'grove.memref_signature' must be a function type, got memref<2xf32>}}
func.func @f() attributes {grove.memref_signature = memref<2xf32>} {
  return
}

// -----

// expected-error @+1 {{'grove.abi.model' must be a #grove.abi_model on a module}}
func.func @f() attributes {grove.abi.model = "x"} {
  return
}

// -----

// expected-error @+1 {{'grove.collectives' must be a string on a function}}
module attributes {grove.collectives = "x"} {
}

// -----

// expected-error @+1 {{unknown grove attribute 'grove.entry'}}
func.func @f() attributes {grove.entry = 0} {
  return
}

// -----

// The runtime takes ranks up to 64 (runtime/src/schema).
func.func @f(%x: tensor<1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1xf32>) {
  // expected-error @+1 {{has rank 65; the runtime takes ranks up to 64}}
  %y = grove.relu %x : tensor<1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1xf32>
  return
}

// -----

// expected-error @+1 {{'grove.below' bounds an integer tensor argument by an integer >= 1, not argument 0 with 3 : i64}}
func.func @f(%x: tensor<2xf32> {grove.below = 3 : i64}) {
  return
}

// -----

// expected-error @+1 {{'grove.below' bounds an integer tensor argument by an integer >= 1, not argument 0 with 0 : i64}}
func.func @f(%y: tensor<2xi32> {grove.below = 0 : i64}) {
  return
}
