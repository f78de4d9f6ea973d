//===- GroveInterfaces.td - Op interfaces of the grove dialect -------------===//
//
// Interfaces passes query instead of listing op classes.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEINTERFACES_TD
#define GROVE_DIALECT_GROVE_IR_GROVEINTERFACES_TD

include "mlir/IR/OpBase.td"

def Grove_StateAccessOpInterface : OpInterface<"StateAccessOpInterface"> {
  let description = [{
    An op that reads or writes a piece of module state (a `grove.param`) by
    name: what grove-params-to-arguments turns into a state argument with a
    role.
  }];
  let cppNamespace = "::mlir::grove";
  let methods = [
    InterfaceMethod<"The grove.param accessed.", "::mlir::FlatSymbolRefAttr",
                    "getStateName", (ins), [{ return $_op.getNameAttr(); }]>,
    InterfaceMethod<"Whether the op writes the state (else it reads it).",
                    "bool", "writesState", (ins)>,
  ];
}

def Grove_VJPOpInterface : OpInterface<"VJPOpInterface"> {
  let description = [{
    A differentiable op: it builds its vector-Jacobian product in grove ops,
    which is how grove-autodiff differentiates a program, op by op in
    reverse. Every grove op implements this interface or carries the
    NotDifferentiable trait (the gtest Differentiability checks it).
  }];
  let cppNamespace = "::mlir::grove";
  let methods = [
    InterfaceMethod<[{
        Builds, at `b`'s insertion point, the cotangent of each operand
        given those of the results (`resultCotangents[i]` is null where no
        result that matters depends on result i). `needed[i]` says whether
        operand i depends on a differentiated param: an operand nobody
        needs may get null, and only a needed one may make the VJP fail
        (a located error). Appends one value per operand to
        `operandCotangents`, each of its operand's type, or null where the
        operand gets none (an index size, integer labels). The forward
        values it reads are the op's own operands and results.
      }],
      "::llvm::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$b,
           "::llvm::ArrayRef<::mlir::Value>":$resultCotangents,
           "::llvm::ArrayRef<bool>":$needed,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandCotangents)>,
  ];
}

def Grove_OptimizerOpInterface : OpInterface<"OptimizerOpInterface"> {
  let description = [{
    An update of params from their gradients, in place, over state the op
    owns: slots `@<param>.<name>.<slot>` of each param's type, and the
    scalars `@<name>.step` (steps taken) and, with `skip_nonfinite`,
    `@<name>.skipped`. grove-expand-training-ops declares that state and
    expands the update into primitive grove ops; a later pass (the
    collectives) reads the gradients as values.
  }];
  let cppNamespace = "::mlir::grove";
  let methods = [
    InterfaceMethod<"The params updated, as flat symbol refs.",
                    "::mlir::ArrayAttr", "getParams", (ins)>,
    InterfaceMethod<"One gradient per param.", "::mlir::OperandRange",
                    "getGradients", (ins)>,
    InterfaceMethod<"The rank-0 learning rate operand, or null.",
                    "::mlir::Value", "getLearningRate", (ins)>,
    InterfaceMethod<"The learning rate where there is no operand.",
                    "::llvm::APFloat", "getLr", (ins)>,
    InterfaceMethod<"The prefix of the op's state names.", "::llvm::StringRef",
                    "getName", (ins)>,
    InterfaceMethod<"Whether a step with a NaN or Inf gradient is skipped.",
                    "bool", "getSkipNonfinite", (ins)>,
    InterfaceMethod<"Global-norm clipping bound (0: none).", "::llvm::APFloat",
                    "getMaxGradNorm", (ins)>,
    InterfaceMethod<"Whether bf16 or f16 params are updated through f32 "
                    "master copies in the op's state.",
                    "bool", "getMasterWeights", (ins)>,
    InterfaceMethod<"The slots each param has.",
                    "::llvm::SmallVector<::llvm::StringRef>", "getStateSlots",
                    (ins)>,
    InterfaceMethod<"The value every element of `slot` starts as.", "double",
                    "getSlotInit", (ins "::llvm::StringRef":$slot), "",
                    [{ return 0.0; }]>,
  ];
  let extraSharedClassDeclaration = [{
    /// The name of state slot `slot` of param `param`.
    std::string getStateName(::llvm::StringRef param, ::llvm::StringRef slot) {
      return (param + "." + $_op.getName() + "." + slot).str();
    }
    std::string getStepName() { return ($_op.getName() + ".step").str(); }
    std::string getSkippedName() {
      return ($_op.getName() + ".skipped").str();
    }
    /// The type the update computes in, of its state and learning rate:
    /// the params' (f32 or f64), or f32 with master weights.
    ::mlir::Type getElementType() {
      if ($_op.getMasterWeights())
        return ::mlir::Float32Type::get($_op->getContext());
      return ::llvm::cast<::mlir::RankedTensorType>(
                 $_op.getGradients()[0].getType())
          .getElementType();
    }
  }];
}

def Grove_RowWiseOpInterface : OpInterface<"RowWiseOpInterface"> {
  let description = [{
    An op that may compute on the rows of a grove.tree_fold cell: the cell
    runs on a batch of nodes, one row each, and each row of its results
    must depend only on the same row of its per-node arguments. The tree
    verifiers ask each op of a cell whether it keeps rows apart, given
    which of its operands have a row per node (at least one does); an op
    without this interface never may. The default suits elementwise ops:
    the rows keep their rank and the other operands broadcast along them.
  }];
  let cppNamespace = "::mlir::grove";
  let methods = [
    InterfaceMethod<[{
        Whether each row of the results depends only on the same row of the
        operands for which `isRow` holds (dimension 0 indexes nodes).
      }],
      "bool", "keepsRowsApart",
      (ins "::llvm::function_ref<bool(::mlir::Value)>":$isRow), "",
      [{ return ::mlir::grove::rowsBroadcast($_op, isRow); }]>,
  ];
}

#endif // GROVE_DIALECT_GROVE_IR_GROVEINTERFACES_TD
