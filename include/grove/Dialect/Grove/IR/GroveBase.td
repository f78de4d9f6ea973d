//===- GroveBase.td - Grove dialect definition and base classes ------------===//
//
// The grove dialect: tensor-level ops for models and their optimizers, with
// value semantics on builtin ranked tensors. Ops in families live in their own
// .td files (state, tensor, math); this file holds what they share.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEBASE_TD
#define GROVE_DIALECT_GROVE_IR_GROVEBASE_TD

include "mlir/IR/OpBase.td"
include "grove/Dialect/Grove/IR/GroveInterfaces.td"
include "mlir/IR/AttrTypeBase.td"

def Grove_Dialect : Dialect {
  let name = "grove";
  let cppNamespace = "::mlir::grove";
  let summary = "Tensor-level ops that Grove compiles ahead of time";
  let description = [{
    Models and their optimizers are written as `func.func`s over builtin
    ranked tensors using grove ops. Any dimension may be dynamic (`?`).
    Module-level weights are `grove.param` symbols read with
    `grove.get_param`; the runtime context owns their storage.
  }];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  // The grove.* discardable attributes (ABIAttrs.h) are declared here:
  // argument and result roles at the ABI, and the ABI passes' records.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let extraClassDeclaration = [{
    /// The attributes of GroveAttrs.td (GroveAttrs.cpp).
    void registerAttributes();
  }];
}

// Every tensor type an op uses (operands, results, type attributes) has at
// most 2^48 bytes in its static dimensions: sizes, strides and offsets are
// 64-bit all the way down, with room for the expansions lowerings make
// (im2col multiplies by the kernel size), so nothing wraps around.
def Grove_SizedTensors : NativeOpTrait<"SizedTensors"> {
  let cppNamespace = "::mlir::grove";
}

// Binary elementwise ops: numpy broadcasting (a static 1 stretches, a
// dynamic size never does) and one element type (verifyBroadcasting).
def Grove_Broadcasting : NativeOpTrait<"Broadcasting"> {
  let cppNamespace = "::mlir::grove";
}

// Reductions: `axes` distinct and in range, the result the input without
// them (or with size 1 under `keepdims`) (verifyReducesAxes).
def Grove_ReducesAxes : NativeOpTrait<"ReducesAxes"> {
  let cppNamespace = "::mlir::grove";
}

// Ops grove-autodiff cannot differentiate through (state writes, checks,
// integer-valued ops): a cotangent reaching one is a located error. Every
// other op implements Grove_VJPOpInterface.
def Grove_NotDifferentiable : NativeOpTrait<"NotDifferentiable"> {
  let cppNamespace = "::mlir::grove";
}

// What an op computes in under a mixed-precision policy (grove-autocast,
// docs/training.md "Mixed precision"), in the spirit of torch.autocast's
// lists. AutocastLow: in the policy's compute type (bf16 or f16), its f32
// operands converted (the GEMM-shaped ops). AutocastWide: in f32, its
// narrowed operands converted back (reductions, normalisations, losses,
// exp and log). AutocastFollow: in the widest type of its float operands
// (elementwise and data movement). An op with none of them runs in the
// types it was written with.
def Grove_AutocastLow : NativeOpTrait<"AutocastLow"> {
  let cppNamespace = "::mlir::grove";
}
def Grove_AutocastWide : NativeOpTrait<"AutocastWide"> {
  let cppNamespace = "::mlir::grove";
}
def Grove_AutocastFollow : NativeOpTrait<"AutocastFollow"> {
  let cppNamespace = "::mlir::grove";
}

// An op a tree cell may run on its rows (RowWiseOpInterface): elementwise
// ops take the interface's default; Grove_RowWiseByRule ops state their own
// rule, `<Op>::keepsRowsApart` in GroveRowWise.cpp.
def Grove_RowWiseByRule
    : DeclareOpInterfaceMethods<Grove_RowWiseOpInterface, ["keepsRowsApart"]>;

class Grove_Op<string mnemonic, list<Trait> traits = []>
    : Op<Grove_Dialect, mnemonic, !listconcat(traits, [Grove_SizedTensors])>;

// A differentiable op: its VJP is `<Op>::buildVJP` (GroveVJPs.cpp).
class Grove_DiffOp<string mnemonic, list<Trait> traits = []>
    : Grove_Op<mnemonic, !listconcat(traits,
          [DeclareOpInterfaceMethods<Grove_VJPOpInterface>])>;

// Element types the dialect admits. f32 is the reference; f16/bf16 are for
// the CUDA target and mixed precision; f64 is for reference checks on the
// host (gradients against finite differences), without library kernels.
def Grove_Float : AnyTypeOf<[F32, F16, BF16, F64]>;
def Grove_FloatTensor : RankedTensorOf<[F32, F16, BF16, F64]>;
def Grove_IndexList : TensorRankOf<[I32], [1]>;
def Grove_AnyTensor
    : RankedTensorOf<[F32, F16, BF16, F64, I1, I8, I16, I32, I64]>;

#endif // GROVE_DIALECT_GROVE_IR_GROVEBASE_TD
