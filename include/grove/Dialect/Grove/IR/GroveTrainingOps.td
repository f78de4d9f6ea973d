//===- GroveTrainingOps.td - Gradients and losses --------------*- tablegen -*-===//
//
// What a training step is written with: the value and gradient of a region
// with respect to chosen params (expanded by grove-autodiff), and losses.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVETRAININGOPS_TD
#define GROVE_DIALECT_GROVE_IR_GROVETRAININGOPS_TD

include "grove/Dialect/Grove/IR/GroveBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Grove_YieldOp : Grove_Op<"yield",
    [Pure, Terminator, ReturnLike, HasParent<"ValueAndGradOp">,
     Grove_NotDifferentiable]> {
  let summary = "ends a grove region op's body with its value";
  let arguments = (ins Variadic<Grove_AnyTensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def Grove_ValueAndGradOp : Grove_Op<"value_and_grad",
    [SingleBlock, RecursiveMemoryEffects, Grove_NotDifferentiable,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a scalar value and its gradient with respect to params";
  let description = [{
    The body computes a scalar (rank-0 float tensor, `grove.yield`ed) from
    values defined above and params it reads with `grove.get_param`. The
    results are that value and, for each param in `wrt`, the gradient of
    the value with respect to it (the param's type). Other params and
    values from above are constants of the differentiation.

    ```mlir
    %loss, %gw, %gb = grove.value_and_grad [@fc.weight, @fc.bias] {
      %w = grove.get_param @fc.weight : tensor<10x64xf32>
      ...
      grove.yield %l : tensor<f32>
    } : tensor<f32>, tensor<10x64xf32>, tensor<10xf32>
    ```

    `grove-autodiff` expands it: the body's ops move before it and the
    backward, built from each op's VJP (`VJPOpInterface`) in reverse order,
    follows them. The body may not write state or nest another
    `grove.value_and_grad`.
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$wrt);
  let results = (outs Grove_FloatTensor:$value,
                      Variadic<Grove_FloatTensor>:$gradients);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $wrt $body attr-dict `:` type($value) (`,` type($gradients)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The body's terminator.
    YieldOp getYield();
  }];
}

def Grove_OneHotOp : Grove_Op<"one_hot", [Pure, Grove_NotDifferentiable]> {
  let summary = "integer labels to one-hot rows";
  let description = [{
    `result[..., c] = 1` where `labels[...] == c`, else 0; the class count is
    the result's last (static) dimension. A label outside `[0, classes)`
    gives a row of zeros; it is not yet reported at run time.

    ```mlir
    %t = grove.one_hot %labels : tensor<?xi32> -> tensor<?x10xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I32, I64]>:$labels);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = "$labels attr-dict `:` type($labels) `->` type($result)";
  let hasVerifier = 1;
}

def Grove_SoftmaxCrossEntropyOp : Grove_DiffOp<"softmax_cross_entropy",
    [Pure]> {
  let summary = "mean softmax cross-entropy of logits against labels";
  let description = [{
    `logits` is N × C, `labels` N integers in `[0, C)`. With label smoothing
    ε the target row is `(1 - ε) · one_hot + ε / C` (PyTorch's
    `cross_entropy(label_smoothing=ε)`). The result is the mean over the N
    rows: `-Σ_c target · log_softmax(logits)`, a rank-0 tensor. Its VJP is
    the closed form `(softmax(logits) - target) / N`.

    ```mlir
    %l = grove.softmax_cross_entropy %logits, %labels {label_smoothing = 0.1}
        : (tensor<?x10xf32>, tensor<?xi32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$logits,
                       RankedTensorOf<[I32, I64]>:$labels,
                       DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Grove_MSELossOp : Grove_DiffOp<"mse_loss", [Pure]> {
  let summary = "mean squared error";
  let description = [{
    The mean over every element of `(prediction - target)²`, a rank-0
    tensor; both operands have one type.

    ```mlir
    %l = grove.mse_loss %y, %t : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<f32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$prediction,
                       Grove_FloatTensor:$target);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $prediction `,` $target attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

// An update of `params` (f32 or f64, one element type) from their
// `gradients`, in place, over state the op owns: `@<param>.<name>.<slot>`
// per param and `@<name>.step`, declared zero-initialised by
// grove-expand-training-ops where the module does not declare them (with
// the param's type; the step a scalar of the params' element type). Two
// optimizers of one function need different names. Before the update,
// `max_grad_norm` > 0 scales all gradients by min(1, max_norm / (global
// L2 norm + 1e-6)) (torch.nn.utils.clip_grad_norm_), and with
// `skip_nonfinite` a step whose gradients hold a NaN or an infinity
// changes no param or state but `@<name>.skipped`, which counts such
// steps. The learning rate is
// the `lr` attribute, or the rank-0 `learning_rate` operand (of the params'
// element type) where given: a schedule computed in the model.
class Grove_OptimizerOp<string mnemonic, string summaryText>
    : Grove_Op<mnemonic, [HasParent<"::mlir::func::FuncOp">,
                          MemoryEffects<[MemRead, MemWrite]>,
                          AttrSizedOperandSegments, Grove_NotDifferentiable,
                          DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = summaryText;
  let assemblyFormat = [{
    $params `(` $gradients `)`
    (`lr` `(` $learning_rate^ `:` type($learning_rate) `)`)? attr-dict `:`
    type($gradients)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The name of state slot `slot` of param `param`.
    std::string getStateName(::llvm::StringRef param, ::llvm::StringRef slot) {
      return (param + "." + getName() + "." + slot).str();
    }
    std::string getStepName() { return (getName() + ".step").str(); }
  }];
}

def Grove_SGDOp : Grove_OptimizerOp<"sgd",
    "stochastic gradient descent with momentum (PyTorch's torch.optim.SGD)"> {
  let description = [{
    With g' = g + weight_decay · p: buf = momentum · buf + g' (state
    `@<p>.<name>.momentum`, only with a momentum), d = g' + momentum · buf
    with `nesterov`, else buf (g' without momentum), and p -= lr · d. As
    torch.optim.SGD with dampening 0 (the zero-initialised buffer gives
    its first step, buf = g').

    ```mlir
    grove.sgd [@fc.weight, @fc.bias] (%gw, %gb)
        {lr = 0.1 : f64, momentum = 0.9 : f64, nesterov}
        : tensor<10x64xf32>, tensor<10xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params,
                       Variadic<Grove_FloatTensor>:$gradients,
                       Optional<Grove_FloatTensor>:$learning_rate,
                       DefaultValuedAttr<F64Attr, "0.01">:$lr,
                       DefaultValuedAttr<F64Attr, "0.0">:$momentum,
                       UnitAttr:$nesterov,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       DefaultValuedAttr<F64Attr, "0.0">:$max_grad_norm,
                       UnitAttr:$skip_nonfinite,
                       DefaultValuedAttr<StrAttr, "\"sgd\"">:$name);
}

def Grove_AdamOp : Grove_OptimizerOp<"adam",
    "Adam and AdamW (PyTorch's torch.optim.Adam / AdamW)"> {
  let description = [{
    With t = step + 1 (state `@<name>.step`), g' = g + weight_decay · p
    (Adam's L2), or p ·= 1 - lr · weight_decay first with `decoupled`
    (AdamW): m = β1 m + (1 - β1) g', v = β2 v + (1 - β2) g'² (states
    `@<p>.<name>.m`, `.v`) and p -= lr / (1 - β1^t) · m / (√v / √(1 - β2^t)
    + ε), as torch.optim.Adam computes it.

    ```mlir
    grove.adam [@fc.weight] (%gw) {lr = 1.0e-03 : f64, decoupled,
        weight_decay = 1.0e-02 : f64} : tensor<10x64xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefArrayAttr:$params,
                       Variadic<Grove_FloatTensor>:$gradients,
                       Optional<Grove_FloatTensor>:$learning_rate,
                       DefaultValuedAttr<F64Attr, "0.001">:$lr,
                       DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                       DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                       DefaultValuedAttr<F64Attr, "1.0e-8">:$epsilon,
                       DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                       UnitAttr:$decoupled,
                       DefaultValuedAttr<F64Attr, "0.0">:$max_grad_norm,
                       UnitAttr:$skip_nonfinite,
                       DefaultValuedAttr<StrAttr, "\"adam\"">:$name);
}

#endif // GROVE_DIALECT_GROVE_IR_GROVETRAININGOPS_TD
