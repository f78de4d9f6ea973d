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

def GroveFuseSplitAttention : Pass<"grove-fuse-split-attention"> {
  let summary = "forms grove.split_attention from ResNeSt's primitive ops";
  let description = [{
    Recognises the attention part of ResNeSt's SplAtConv2d as a frontend
    emits it and replaces it by one `grove.split_attention`:

    * radix R > 1: U sliced into R channel blocks (`grove.slice` along
      dimension 1), their sum, `grove.global_avg_pool`, a 1×1 grouped
      `grove.conv2d` with bias, `grove.batch_norm`, `grove.relu`, a second
      1×1 grouped `grove.conv2d` with bias, rSoftMax as `grove.reshape` to
      B × K × R × C/K, `grove.transpose [0, 2, 1, 3]`, `grove.softmax` over
      axis 1 and `grove.reshape` back to B × R·C × 1 × 1, then R attention
      slices multiplied with the matching U slices and summed;
    * radix 1: the same MLP on `global_avg_pool(U)`, `grove.sigmoid`, and
      one multiplication with U.

    Adds and multiplications may take their operands in either order and
    the sums may be associated in any way. Nothing is rewritten unless
    every intermediate is used only inside the pattern (the U slices once
    by the sum and once by their product), the slices tile the channels
    exactly, the radix and cardinality agree everywhere, and the
    convolutions are 1×1, unstrided, unpadded and grouped by the
    cardinality.
  }];
  let dependentDialects = ["grove::GroveDialect"];
}

#endif // GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_TD
