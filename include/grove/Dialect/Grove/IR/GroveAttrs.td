//===- GroveAttrs.td - The model descriptor as attributes --*- tablegen -*-===//
//
// What a model shows at the C ABI (docs/abi.md), kept typed from the pass
// that finds it (grove-prepare-abi, the preconditions' passes) to the one
// pass that serializes it (grove-emit-entry-points writes the descriptor
// JSON once). Each attribute mirrors one struct of grove/ModelSchema.h; the
// model attribute's verifier is the schema's own validateModel.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEATTRS_TD
#define GROVE_DIALECT_GROVE_IR_GROVEATTRS_TD

include "grove/Dialect/Grove/IR/GroveBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Grove_StateAccess : I32Enum<"StateAccess",
    "how an entry uses a piece of state it is handed", [
    I32EnumCase<"Read", 0, "read">,
    I32EnumCase<"Write", 1, "write">]> {
  let cppNamespace = "::mlir::grove";
}

def Grove_PreconditionAttrInterface
    : AttrInterface<"PreconditionAttrInterface"> {
  let cppNamespace = "::mlir::grove";
  let description = [{
    A relation between an entry's inputs that its generated code assumes and
    the runtime checks before the code runs (a refused call writes no
    state). A new kind is one attribute implementing this interface, one
    struct in grove/ModelSchema.h and one check function in the runtime
    (Invoke.cpp).
  }];
  let methods = [
    InterfaceMethod<"The precondition as the descriptor holds it.",
      "::grove::schema::Precondition", "toSchema">,
  ];
}

class Grove_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Grove_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
  let assemblyFormat = "`<` struct(params) `>`";
}

class Grove_PreconditionAttr<string name, string attrMnemonic>
    : Grove_Attr<name, attrMnemonic, [DeclareAttrInterfaceMethods<
          Grove_PreconditionAttrInterface>]>;

def Grove_BelowAttr : Grove_PreconditionAttr<"Below", "below"> {
  let summary = "every value of an integer input lies in [0, bound)";
  let parameters = (ins "int64_t":$bound);
}

def Grove_EqualDimAttr : Grove_PreconditionAttr<"EqualDim", "equal_dim"> {
  let summary = "a dynamic size equals one of an earlier input";
  let description = [{
    The input's dynamic dimension `dim` equals dimension `input_dim` of the
    entry's earlier input number `input` (inputs are numbered without the
    state).
  }];
  let parameters = (ins "int64_t":$dim, "int64_t":$input, "int64_t":$input_dim);
}

def Grove_ForestAttr : Grove_PreconditionAttr<"Forest", "forest"> {
  let summary = "the input is a forest's child offsets";
  let description = [{
    The inputs `children` and `roots` hold the rest of the forest, and a
    node has at most `arity` children (0: any); docs/trees.md.
  }];
  let parameters = (ins "int64_t":$children, "int64_t":$roots,
                        "int64_t":$arity);
}

def Grove_ForestNodesAttr
    : Grove_PreconditionAttr<"ForestNodes", "forest_nodes"> {
  let summary = "one row per node of a forest";
  let description = [{
    Dimension 0 of the input is one less than that of input `offsets`, a
    forest's child offsets.
  }];
  let parameters = (ins "int64_t":$offsets);
}

def Grove_ABITensorAttr : Grove_Attr<"ABITensor", "abi_tensor"> {
  let summary = "an entry's input or output at the ABI";
  let parameters = (ins "StringAttr":$name, "RankedTensorType":$type,
                        OptionalParameter<"ArrayAttr">:$preconditions);
}

def Grove_ABIStateAttr : Grove_Attr<"ABIState", "abi_state"> {
  let summary = "a piece of state the context owns";
  let description = [{
    A weight (no `init`), or state whose every element starts as the bits
    `init` (a 64-bit pattern; optimizer moments, counters).
  }];
  let parameters = (ins "StringAttr":$name, "RankedTensorType":$type,
                        OptionalParameter<"IntegerAttr">:$init);
}

def Grove_ABIStateArgAttr : Grove_Attr<"ABIStateArg", "abi_state_arg"> {
  let summary = "an entry's argument that the context passes";
  let parameters = (ins "StringAttr":$state, "StateAccess":$access);
}

def Grove_ABICollectivesAttr
    : Grove_Attr<"ABICollectives", "abi_collectives"> {
  let summary = "what an entry exchanges with the other ranks";
  let description = [{
    `config`: grove-insert-collectives' options as a pipeline string (empty
    for collectives the user wrote); `ops`: each collective op of the entry,
    in program order, as text. The ranks of a job agree on both before a
    call runs (docs/distributed.md).
  }];
  let parameters = (ins "StringAttr":$config, "ArrayAttr":$ops);
}

def Grove_ABIEntryAttr : Grove_Attr<"ABIEntry", "abi_entry"> {
  let summary = "an entry point: its arguments in order, its results";
  let description = [{
    `args` are #grove.abi_tensor (the caller's inputs, in order) and
    #grove.abi_state_arg (state), in the function's order; `collectives`,
    where the entry has any, what it exchanges with the other ranks.
  }];
  let parameters = (ins "StringAttr":$name, "ArrayAttr":$args,
                        "ArrayAttr":$outputs,
                        OptionalParameter<"ABICollectivesAttr">:$collectives);
}

def Grove_ABIModelAttr : Grove_Attr<"ABIModel", "abi_model"> {
  let summary = "the model descriptor";
  let description = [{
    Recorded on the module by grove-prepare-abi; grove-emit-entry-points
    adds the preconditions found while lowering and writes it, once, as
    the descriptor JSON (docs/abi.md).
  }];
  let parameters = (ins "StringAttr":$module, "StringAttr":$target,
                        "ArrayAttr":$state, "ArrayAttr":$entries);
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The descriptor, or failure (with a diagnostic through `emitError`
    /// where one is given) if an array holds the wrong attributes or the
    /// schema's validateModel refuses it.
    static ::mlir::FailureOr<::grove::schema::ModelDesc>
    toSchema(::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError,
             ::mlir::StringAttr module, ::mlir::StringAttr target,
             ::mlir::ArrayAttr state, ::mlir::ArrayAttr entries);
    ::mlir::FailureOr<::grove::schema::ModelDesc> toSchema() const {
      return toSchema(nullptr, getModule(), getTarget(), getState(),
                      getEntries());
    }
    /// The attribute of a descriptor (inverse of toSchema).
    static ABIModelAttr fromSchema(::mlir::MLIRContext *ctx,
                                   const ::grove::schema::ModelDesc &model);
  }];
}

//===----------------------------------------------------------------------===//
// Policies that passes read
//===----------------------------------------------------------------------===//

def Grove_AutocastAttr : Grove_Attr<"Autocast", "autocast"> {
  let summary = "a mixed-precision policy (grove-autocast)";
  let description = [{
    As `grove.autocast` on a function, or on the module for every function
    without its own: grove-autocast runs the function's ops marked
    AutocastLow (matmul, conv2d, attention) in `compute`, bf16 or f16, its
    AutocastWide ops (reductions, normalisations, losses, exp, log) in f32
    and its AutocastFollow ops in the widest type of their operands
    (GroveBase.td). Params, function signatures and everything the
    optimizers do stay as written (f32 master weights and state).

    With `loss_scale` > 0 (by default, -1: 65536 for f16, none for bf16;
    0: none) each grove.value_and_grad of the function scales its value by
    a dynamic loss scale before the backward, starting at `loss_scale`:
    the gradients are divided by it again, a step whose gradients are not
    finite is skipped (the function's optimizers get `skip_nonfinite`) and
    halves the scale, and `growth_interval` finite steps in a row double it
    (torch.cuda.amp.GradScaler's rule).

    ```mlir
    module attributes {grove.autocast = #grove.autocast<compute = bf16>}
    func.func @train_step(...) attributes {grove.autocast =
        #grove.autocast<compute = f16, loss_scale = 1024>}
    ```
  }];
  let parameters = (ins
    "::mlir::FloatType":$compute,
    DefaultValuedParameter<"int64_t", "-1">:$loss_scale,
    DefaultValuedParameter<"int64_t", "2000">:$growth_interval);
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The scale dynamic loss scaling starts at, 0 for none: `loss_scale`,
    /// or by default 65536 for f16 and none for bf16.
    int64_t getInitialLossScale() const {
      if (getLossScale() != -1)
        return getLossScale();
      return getCompute().isF16() ? 65536 : 0;
    }
  }];
}

#endif // GROVE_DIALECT_GROVE_IR_GROVEATTRS_TD
