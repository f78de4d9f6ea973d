//===- Passes.td - Grove dialect transformation passes ---------------------===//
//
// Passes that rewrite grove IR to grove IR (value semantics, before any
// lowering). Each is small and testable alone with grove-opt.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_TD
#define GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def GrovePrepareABI : Pass<"grove-prepare-abi", "ModuleOp"> {
  let summary = "records the model descriptor and marks public entry points";
  let description = [{
    Checks that every public function can cross the C ABI (ranked tensor
    arguments and results of a supported dtype), then records the textual
    model descriptor (docs/abi.md) on the module as `grove.abi.descriptor`,
    the module name as `grove.abi.module`, and on each public function its
    entry index (`grove.abi.entry`). Public functions are renamed to
    `_grove_<module>_<name>` so that several models link into one program.
  }];
  let options = [
    Option<"moduleName", "module-name", "std::string", /*default=*/"\"\"",
           "Name of the generated library (default: the module's sym_name, "
           "else 'model')">,
    Option<"target", "target", "std::string", /*default=*/"\"host\"",
           "Target the model is compiled for (host or cuda); recorded in the "
           "descriptor so that the runtime places tensors accordingly">,
  ];
}

def GroveParamsToArguments : Pass<"grove-params-to-arguments", "ModuleOp"> {
  let summary = "turns grove.param state into leading function arguments";
  let description = [{
    Every function gains one leading tensor argument per `grove.param`, in
    declaration order; `grove.get_param` becomes a use of that argument and
    calls forward the caller's arguments. The runtime passes the context's
    weight buffers there, so all entry points share one copy of the state.
    The `grove.param` declarations are erased.
  }];
  let dependentDialects = ["func::FuncDialect"];
}

#endif // GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_TD
