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

def Grove_ParamOp : Grove_Op<"param", [Symbol]> {
  let summary = "declares a named, runtime-owned weight tensor";
  let description = [{
    Declares module-level state with a static shape. The runtime context
    allocates it and fills it from a safetensors file by `sym_name`; every
    function of the module reads it with `grove.get_param`.

    ```mlir
    grove.param @fc1.weight : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttr:$type);
  let assemblyFormat = "$sym_name attr-dict `:` $type";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getType());
    }
  }];
}

def Grove_GetParamOp : Grove_Op<"get_param",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     MemoryEffects<[MemRead]>]> {
  let summary = "reads the current value of a grove.param";
  let description = [{
    ```mlir
    %w = grove.get_param @fc1.weight : tensor<128x64xf32>
    ```
    The result type must equal the declared type of the param.
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs Grove_AnyTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

#endif // GROVE_DIALECT_GROVE_IR_GROVESTATEOPS_TD
