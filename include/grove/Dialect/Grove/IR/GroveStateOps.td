//===- GroveStateOps.td - Module-level state (weights) ---------------------===//
//
// Weights, and later optimizer moments and compression residuals, are
// mutable module-level state owned by the runtime context. They are symbols
// so that every entry point of a module shares them by name.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVESTATEOPS_TD
#define GROVE_DIALECT_GROVE_IR_GROVESTATEOPS_TD

include "grove/Dialect/Grove/IR/GroveBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "grove/Dialect/Grove/IR/GroveInterfaces.td"

def Grove_ParamOp : Grove_Op<"param", [Symbol, Grove_NotDifferentiable]> {
  let summary = "declares a named piece of runtime-owned module state";
  let description = [{
    Declares module-level state with a static shape, owned by the runtime
    context and shared by every function of the module by name. Two kinds:

    * without an initialiser, a **weight**: it must come from a safetensors
      file (or `grove_context_set_weight`) before any call;
    * with `= VALUE`, **initialised state** (optimizer moments, step
      counters, running statistics, compression residuals): every element
      starts as the scalar VALUE, of the element type, and a weights file
      may omit it.

    Functions read state with `grove.get_param` and write it with
    `grove.set_param`; a write is visible to later calls of every entry.

    ```mlir
    grove.param @fc1.weight : tensor<128x64xf32>
    grove.param @bn.running_mean : tensor<64xf32> = 0.0 : f32
    grove.param @step : tensor<i64> = 0 : i64
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttr:$type,
                       OptionalAttr<TypedAttrInterface>:$initial_value);
  let assemblyFormat = "$sym_name attr-dict `:` $type (`=` $initial_value^)?";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
    /// The initialiser's raw bits (one element, the element type's width);
    /// failure for a weight.
    ::mlir::FailureOr<uint64_t> getInitialBits();
  }];
}

def Grove_GetParamOp : Grove_Op<"get_param",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     DeclareOpInterfaceMethods<Grove_StateAccessOpInterface>,
     MemoryEffects<[MemRead]>, Grove_NotDifferentiable]> {
  let summary = "reads the current value of a grove.param";
  let description = [{
    ```mlir
    %w = grove.get_param @fc1.weight : tensor<128x64xf32>
    ```
    The result type must equal the declared type of the param. After a
    `grove.set_param` of the same param in the same function, the result is
    the value set.
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Grove_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def Grove_SetParamOp : Grove_Op<"set_param",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     DeclareOpInterfaceMethods<Grove_StateAccessOpInterface>,
     HasParent<"::mlir::func::FuncOp">, MemoryEffects<[MemWrite]>,
     Grove_NotDifferentiable]> {
  let summary = "writes a grove.param in place";
  let description = [{
    ```mlir
    grove.set_param @bn.running_mean = %new : tensor<64xf32>
    ```
    Sets the param to `value` (its declared type). The write happens in
    place in the context's buffer when the call ends: later calls of any
    entry see it, and later `grove.get_param`s of this function read
    `value`. Calls of an entry that writes state run exclusively on their
    context. It appears directly in a function body (not inside a region);
    a function that writes state is inlined into the functions calling it
    (`grove-params-to-arguments`).
  }];
  let arguments = (ins FlatSymbolRefAttr:$name, Grove_AnyTensor:$value);
  let assemblyFormat = "$name `=` $value attr-dict `:` type($value)";
}

def Grove_AssignOp : Grove_Op<"assign", [MemoryEffects<[MemWrite]>,
                                         AllTypesMatch<["value", "state"]>,
                                         Grove_NotDifferentiable]> {
  let summary = "overwrites a state argument's buffer (internal)";
  let description = [{
    What `grove-params-to-arguments` makes of a `grove.set_param`: `value`
    is copied into the buffer of `state`, a function argument carrying
    `grove.state` and `grove.writes` (or a `tensor.collapse_shape` /
    `expand_shape` view of one, as grove-write-state-in-place makes it).
    It survives the lowering to linalg and bufferizes
    (BufferizableOpInterface) to a copy into the argument's buffer, which
    must be written in place; a write that bufferization
    could only make out of place (the old value is still read after it) is
    a located error, never a silent copy.

    ```mlir
    grove.assign %new to %arg0 : tensor<64xf32>
    ```
  }];
  let arguments = (ins Grove_AnyTensor:$value, Grove_AnyTensor:$state);
  let assemblyFormat = "$value `to` $state attr-dict `:` type($value)";
  let hasVerifier = 1;
  // Writing the state its own value (an update that folded away, a step an
  // optimizer skips) is no write.
  let hasCanonicalizeMethod = 1;
  let extraClassDeclaration = [{
    /// The state argument `state` is, or is a view of (null if neither).
    ::mlir::BlockArgument getStateArgument();
  }];
}

#endif // GROVE_DIALECT_GROVE_IR_GROVESTATEOPS_TD
