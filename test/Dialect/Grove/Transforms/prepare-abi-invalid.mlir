// RUN: grove-opt %s -split-input-file -verify-diagnostics --grove-prepare-abi
// RUN: not grove-opt %s -split-input-file --grove-prepare-abi=module-name=9lives 2>&1 | FileCheck %s --check-prefix=OPTION

// One case per diagnostic of grove-prepare-abi (PrepareABI.cpp).

// A bad module-name option is reported like a bad sym_name.
// OPTION: error: module name '9lives' is not a C identifier (grovec: --name=, grove-opt: module-name=)

// expected-error @+1 {{module name 'my-net' is not a C identifier (grovec: --name=, grove-opt: module-name=)}}
module @"my-net" {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{module name '2net' is not a C identifier (grovec: --name=, grove-opt: module-name=)}}
module @"2net" {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{param name 'fc weight' must be non-empty, without whitespace or control characters (it names a tensor in the weights file)}}
grove.param @"fc weight" : tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{param name 'fc	weight' must be non-empty, without whitespace or control characters (it names a tensor in the weights file)}}
grove.param @"fc\09weight" : tensor<4xf32>
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{entry point name 'fc.forward' is not a C identifier}}
func.func @"fc.forward"(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{entry point @f: argument 0 has type 'f32'; entry points take and return ranked tensors of f32, f16, bf16, f64, i1, i8, i16, i32 or i64}}
func.func @f(%x: f32) -> tensor<4xf32> {
  %c = grove.constant dense<1.0> : tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

// expected-error @+1 {{entry point @f: argument 1 has type 'memref<4xf32>'; entry points take and return ranked tensors}}
func.func @f(%x: tensor<4xf32>, %m: memref<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{entry point @f: argument 0 has type 'tensor<*xf32>'}}
func.func @f(%x: tensor<*xf32>) {
  return
}

// -----

// expected-error @+1 {{entry point @f: argument 0 has type 'tensor<4xindex>'}}
func.func @f(%x: tensor<4xindex>) {
  return
}

// -----

// expected-error @+1 {{entry point @f: argument 0 has type 'tensor<4xui8>'}}
func.func @f(%x: tensor<4xui8>) {
  return
}

// -----

// expected-error @+1 {{entry point @f: result 0 has type 'i32'; entry points take and return ranked tensors of f32, f16, bf16, f64, i1, i8, i16, i32 or i64}}
func.func @f(%x: tensor<4xf32>) -> i32 {
  %c = arith.constant 0 : i32
  return %c : i32
}

// -----

// expected-error @+1 {{entry point @f: result 1 has type 'tensor<4xcomplex<f32>>'}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xcomplex<f32>>) {
  %y = tensor.empty() : tensor<4xcomplex<f32>>
  return %x, %y : tensor<4xf32>, tensor<4xcomplex<f32>>
}

// -----

// expected-error @+1 {{argument name 'my x' is not a C identifier}}
func.func @f(%x: tensor<4xf32> {grove.name = "my x"}) {
  return
}

// -----

// expected-error @+1 {{argument name '1x' is not a C identifier}}
func.func @f(%x: tensor<4xf32> {grove.name = "1x"}) {
  return
}

// -----

// expected-error @+1 {{argument name '' is not a C identifier}}
func.func @f(%x: tensor<4xf32> {grove.name = ""}) {
  return
}

// -----

// expected-error @+1 {{result name 'log-probs' is not a C identifier}}
func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32> {grove.name = "log-probs"}) {
  return %x : tensor<4xf32>
}

// -----

// Private functions are checked by nobody: only public ones cross the ABI.
// expected-error @+1 {{module has no public function to export}}
module @only_private {
  func.func private @f(%x: f32) -> f32 {
    return %x : f32
  }
  func.func private @decl(tensor<4xf32>) -> tensor<4xf32>
}

// -----

// expected-error @+1 {{module has no public function to export}}
module @empty {
  grove.param @w : tensor<4xf32>
}

// -----

module @m {
  // expected-error @+1 {{symbol @grove_rt_matmul_f32 is reserved (grove_rt_* and _grove* name the runtime's services and generated helpers)}}
  func.func private @grove_rt_matmul_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

module @m {
  // expected-error @+1 {{symbol @_grove_m_g is reserved}}
  func.func private @_grove_m_g(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Generated code has no ABI for calling out: a function without a body
// could never be linked.
func.func private @ext(tensor<4xf32>) -> tensor<4xf32>
func.func @calls_out(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{call to @ext, which has no body: a model's functions must all be defined in the module}}
  %0 = call @ext(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{grove.name of argument 0 must be a string, got 3 : i64}}
func.func @numeric_name(%x: tensor<4xf32> {grove.name = 3 : i64}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{grove.name of result 0 must be a string, got true}}
func.func @bool_result_name(%x: tensor<4xf32>) -> (tensor<4xf32> {grove.name = true}) {
  return %x : tensor<4xf32>
}

// -----

// Generated names <module>_* must stay out of the runtime's namespace: a
// module `grove` would define grove_context_create & co.
// expected-error @+1 {{module name 'grove' is reserved: the generated names <module>_* would land in the runtime's namespace (grove_*, GROVE_*, mgpu*, _mlir*)}}
module @grove {
  func.func @context_create(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// The header's macros are <MODULE>_*: GROVE_* is the runtime's too.
// expected-error @+1 {{module name 'Grove' is reserved}}
module @Grove {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{module name 'grove_x' is reserved}}
module @grove_x {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// expected-error @+1 {{module name 'mgpuModule' is reserved}}
module @mgpuModule {
  func.func @Load(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// A name that merely starts like the runtime's is fine.
module @groves {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// The runtime takes ranks up to 64: a signature beyond is located here,
// not an internal error at run time.
// expected-error @+1 {{entry point @f: argument 0 has rank 65; the runtime takes ranks up to 64}}
func.func @f(%x: tensor<1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1x1xf32>) {
  return
}

// -----

// A forest whose children and roots are no inputs of the entry: the
// descriptor would be refused by every reader, so it is refused here.
// expected-error @+1 {{invalid model descriptor at entries[0].inputs[0].preconditions[0]: entry 'f': the forest of input 'offsets' needs three distinct i32 inputs of one dynamic dimension (offsets, children, roots)}}
module {
  func.func @f(%o: tensor<?xi32> {grove.name = "offsets", grove.forest = array<i64: 5, 6, 0>}) {
    return
  }
}
