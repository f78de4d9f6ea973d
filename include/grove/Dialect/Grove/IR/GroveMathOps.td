//===- GroveMathOps.td - Elementwise, contraction and reduction ops -------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVEMATHOPS_TD
#define GROVE_DIALECT_GROVE_IR_GROVEMATHOPS_TD

include "grove/Dialect/Grove/IR/GroveBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Binary ops broadcast with numpy rules: shapes align at the trailing
// dimension and a static 1 stretches. A dynamic dimension is never
// stretched, so `?` against `?` means equal sizes.
class Grove_BinaryOp<string mnemonic, list<Trait> traits = []>
    : Grove_DiffOp<mnemonic, !listconcat(traits, [Pure, Grove_Broadcasting,
                                   Grove_RowWiseOpInterface,
                                   Grove_AutocastFollow])> {
  let arguments = (ins Grove_FloatTensor:$lhs, Grove_FloatTensor:$rhs);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      build($_builder, $_state, inferBroadcastType(lhs, rhs), lhs, rhs);
    }]>
  ];
  let hasFolder = 1;
}

def Grove_AddOp : Grove_BinaryOp<"add", [Commutative]> {
  let summary = "elementwise addition with broadcasting";
}
def Grove_SubOp : Grove_BinaryOp<"sub"> {
  let summary = "elementwise subtraction with broadcasting";
}
def Grove_MulOp : Grove_BinaryOp<"mul", [Commutative]> {
  let summary = "elementwise multiplication with broadcasting";
}
def Grove_DivOp : Grove_BinaryOp<"div"> {
  let summary = "elementwise division with broadcasting";
}
def Grove_MaxOp : Grove_BinaryOp<"max", [Commutative]> {
  let summary = "elementwise maximum with broadcasting (NaN propagates)";
}
def Grove_MinOp : Grove_BinaryOp<"min", [Commutative]> {
  let summary = "elementwise minimum with broadcasting (NaN propagates)";
}

class Grove_UnaryOp<string mnemonic, string formula,
                    Trait autocast = Grove_AutocastFollow>
    : Grove_DiffOp<mnemonic, [Pure, SameOperandsAndResultType,
                              Grove_RowWiseOpInterface, autocast]> {
  let summary = "elementwise " # formula;
  let arguments = (ins Grove_FloatTensor:$input);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Grove_ConvertOp : Grove_DiffOp<"convert", [Pure, SameOperandsAndResultShape]> {
  let summary = "elementwise conversion to another float type";
  let description = [{
    Rounds to nearest even when narrowing (f32 to f16 or bf16: the
    compressed collectives' casts), exact when widening.

    ```mlir
    %h = grove.convert %x : tensor<64xf32> -> tensor<64xf16>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$input);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Grove_ReluOp : Grove_UnaryOp<"relu", "max(x, 0)">;
def Grove_SigmoidOp : Grove_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Grove_TanhOp : Grove_UnaryOp<"tanh", "tanh(x)">;
def Grove_ExpOp : Grove_UnaryOp<"exp", "exp(x)", Grove_AutocastWide>;
def Grove_LogOp : Grove_UnaryOp<"log", "natural logarithm",
                                Grove_AutocastWide>;
def Grove_SqrtOp : Grove_UnaryOp<"sqrt", "square root">;
def Grove_GeluOp : Grove_UnaryOp<"gelu", "x * Phi(x), exact (erf) form">;
def Grove_GeluTanhOp : Grove_UnaryOp<"gelu_tanh",
    "x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GELU's tanh form"> {
  let description = [{
    torch.nn.functional.gelu with `approximate='tanh'` (BERT's and GPT-2's
    activation).
  }];
}
def Grove_ErfOp : Grove_UnaryOp<"erf", "error function">;
def Grove_SinOp : Grove_UnaryOp<"sin", "sine">;
def Grove_CosOp : Grove_UnaryOp<"cos", "cosine">;
def Grove_FloorOp : Grove_UnaryOp<"floor", "largest integer not above x"> {
  let description = [{
    Piecewise constant: no cotangent passes through it (schedules and
    periods count steps with it).
  }];
}
def Grove_StepOp : Grove_UnaryOp<"step", "Heaviside step: 1 where x > 0, else 0"> {
  let description = [{
    The masks of VJPs (relu, max, min, reduce_max) are steps of a
    difference; its own derivative is zero almost everywhere, so no
    cotangent passes through it.
  }];
}

def Grove_SelectOp : Grove_DiffOp<"select", [Pure, Grove_RowWiseOpInterface,
    Grove_AutocastFollow,
    AllTypesMatch<["true_value", "false_value", "result"]>]> {
  let summary = "elementwise choice by a float mask";
  let description = [{
    `result = mask > 0 ? true_value : false_value`, the mask broadcast to
    the values' shape (numpy rules; a NaN mask chooses `false_value`). An
    optimizer keeps its state where a step is skipped with it; a NaN in the
    value not chosen does not leak, as it would through `m·a + (1-m)·b`.

    ```mlir
    %p = grove.select %ok, %new, %old
        : (tensor<f32>, tensor<128x64xf32>, tensor<128x64xf32>) -> tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$mask, Grove_FloatTensor:$true_value,
                       Grove_FloatTensor:$false_value);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $mask `,` $true_value `,` $false_value attr-dict `:`
    functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$mask, "::mlir::Value":$trueValue,
                   "::mlir::Value":$falseValue), [{
      build($_builder, $_state, trueValue.getType(), mask, trueValue,
            falseValue);
    }]>
  ];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

def Grove_MatmulOp : Grove_DiffOp<"matmul", [Pure, Grove_RowWiseByRule,
                                              Grove_AutocastLow]> {
  let summary = "matrix product, optionally transposed and batched";
  let description = [{
    `op(lhs) @ op(rhs)` where `op` transposes the last two dimensions when
    `transpose_lhs` / `transpose_rhs` is set. Supported ranks: 2x2 (M×K @
    K×N), 3x3 with equal batch (B×M×K @ B×K×N), and 3x2 (a shared right
    operand, as a dense layer applied to a sequence).

    ```mlir
    %y = grove.matmul %x, %w {transpose_rhs}
        : (tensor<?x64xf32>, tensor<128x64xf32>) -> tensor<?x128xf32>
    ```

    Canonicalization turns `one_hot(ids) @ table` (i32 ids, a table of
    static shape, neither side transposed) into `grove.embedding %table,
    %ids {unchecked}`: a lookup of rows instead of a product over the
    classes, whose gradient sums rows per id instead of a GEMM over the
    one-hot matrix. Ids out of range still give zeros and are not bounded
    at the ABI, as one_hot's labels are not. The values are equal where the
    table is finite (a product would spread an infinity or NaN of the table
    to every row, as 0 · inf). Under autocast the lookup keeps the table's
    type where the product would have been computed in the low one.
  }];
  let arguments = (ins Grove_FloatTensor:$lhs, Grove_FloatTensor:$rhs,
                       UnitAttr:$transpose_lhs, UnitAttr:$transpose_rhs);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs,
                   CArg<"bool", "false">:$transposeLhs,
                   CArg<"bool", "false">:$transposeRhs), [{
      build($_builder, $_state,
            inferMatmulType(lhs, rhs, transposeLhs, transposeRhs), lhs, rhs,
            transposeLhs, transposeRhs);
    }]>
  ];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Normalisations and reductions
//===----------------------------------------------------------------------===//

class Grove_SoftmaxLikeOp<string mnemonic, string what>
    : Grove_DiffOp<mnemonic, [Pure, SameOperandsAndResultType,
                              Grove_RowWiseByRule, Grove_AutocastWide]> {
  let summary = what # " along one axis";
  let description = [{
    `axis` may be negative (counted from the end), numpy style.
  }];
  let arguments = (ins Grove_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Grove_SoftmaxOp : Grove_SoftmaxLikeOp<"softmax", "softmax">;
def Grove_LogSoftmaxOp : Grove_SoftmaxLikeOp<"log_softmax", "log-softmax">;

class Grove_ReduceOp<string mnemonic, string what, Trait autocast>
    : Grove_DiffOp<mnemonic, [Pure, Grove_ReducesAxes, Grove_RowWiseByRule,
                              autocast]> {
  let summary = what # " over a set of axes";
  let description = [{
    `axes` are distinct, in range, and may be negative. With `keepdims` the
    reduced dimensions stay as size 1, otherwise they are dropped.

    ```mlir
    %s = grove.}] # mnemonic # [{ %x {axes = array<i64: 1>}
        : tensor<?x10xf32> -> tensor<?xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$input, DenseI64ArrayAttr:$axes,
                       UnitAttr:$keepdims);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$axes,
                   CArg<"bool", "false">:$keepdims), [{
      build($_builder, $_state, inferReduceType(input, axes, keepdims), input,
            axes, keepdims);
    }]>
  ];
  let hasFolder = 1;
}

def Grove_ReduceSumOp : Grove_ReduceOp<"reduce_sum", "sum",
                                        Grove_AutocastWide>;
def Grove_ReduceMeanOp : Grove_ReduceOp<"reduce_mean", "mean",
                                          Grove_AutocastWide>;
def Grove_ReduceMaxOp : Grove_ReduceOp<"reduce_max", "maximum",
                                        Grove_AutocastFollow>;

#endif // GROVE_DIALECT_GROVE_IR_GROVEMATHOPS_TD
