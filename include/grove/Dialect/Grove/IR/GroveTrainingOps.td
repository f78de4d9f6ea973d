//===- GroveTrainingOps.td - Gradients and losses --------------*- tablegen -*-===//
//
// What a training step is written with: the value and gradient of a region
// with respect to chosen params (expanded by grove-autodiff), and losses.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVETRAININGOPS_TD
#define GROVE_DIALECT_GROVE_IR_GROVETRAININGOPS_TD

include "grove/Dialect/Grove/IR/GroveBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

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

def Grove_OneHotOp : Grove_Op<"one_hot",
    [Pure, Grove_NotDifferentiable, Grove_RowWiseByRule]> {
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
    [Pure, Grove_AutocastWide]> {
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

def Grove_MSELossOp : Grove_DiffOp<"mse_loss", [Pure, Grove_AutocastWide]> {
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
// `gradients`, in place, over state the op owns (OptimizerOpInterface):
// bf16 or f16 params need `master_weights`: the update then runs in f32 on
// copies `@<param>.<name>.master` (taken from the params on the first
// step, `@<name>.step` = 0), and each param is its copy rounded; the
// other slots and the rate are f32 too.
// `@<param>.<name>.<slot>` per param, `@<name>.step` (the steps taken) and
// with `skip_nonfinite` `@<name>.skipped`, declared zero-initialised by
// grove-expand-training-ops where the module does not declare them (with
// the param's type; the counters scalars of the params' element type). Two
// optimizers of one function need different names. Before the update,
// `max_grad_norm` > 0 scales all gradients by min(1, max_norm / (global
// L2 norm + 1e-6)) (torch.nn.utils.clip_grad_norm_), and with
// `skip_nonfinite` a step whose gradients hold a NaN or an infinity
// changes no param or state but `@<name>.skipped`, which counts such
// steps. The learning rate is the `lr` attribute, or the rank-0
// `learning_rate` operand (of the params' element type) where given: a
// schedule computed in the model (grove.lr_schedule).
class Grove_OptimizerOp<string mnemonic, string summaryText, dag hyperparams,
                        string defaultName>
    : Grove_Op<mnemonic, [HasParent<"::mlir::func::FuncOp">,
                          MemoryEffects<[MemRead, MemWrite]>,
                          AttrSizedOperandSegments, Grove_NotDifferentiable,
                          Grove_OptimizerOpInterface,
                          DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = summaryText;
  let arguments = !con(
      (ins FlatSymbolRefArrayAttr:$params,
           Variadic<Grove_FloatTensor>:$gradients,
           Optional<Grove_FloatTensor>:$learning_rate),
      hyperparams,
      (ins DefaultValuedAttr<F64Attr, "0.0">:$max_grad_norm,
           UnitAttr:$skip_nonfinite,
           UnitAttr:$master_weights,
           DefaultValuedAttr<StrAttr, "\"" # defaultName # "\"">:$name));
  let assemblyFormat = [{
    $params `(` $gradients `)`
    (`lr` `(` $learning_rate^ `:` type($learning_rate) `)`)? attr-dict `:`
    type($gradients)
  }];
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult
    $cppClass::verifySymbolUses(::mlir::SymbolTableCollection &table) {
      return verifyOptimizerSymbols(*this, table);
    }
  }];
}

def Grove_SGDOp : Grove_OptimizerOp<"sgd",
    "stochastic gradient descent with momentum (PyTorch's torch.optim.SGD)",
    (ins DefaultValuedAttr<F64Attr, "0.01">:$lr,
         DefaultValuedAttr<F64Attr, "0.0">:$momentum,
         UnitAttr:$nesterov,
         DefaultValuedAttr<F64Attr, "0.0">:$weight_decay), "sgd"> {
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
  let extraClassDeclaration = [{
    ::llvm::SmallVector<::llvm::StringRef> getStateSlots() {
      if (getMomentum().isZero())
        return {};
      return {"momentum"};
    }
  }];
}

def Grove_AdamOp : Grove_OptimizerOp<"adam",
    "Adam and AdamW (PyTorch's torch.optim.Adam / AdamW)",
    (ins DefaultValuedAttr<F64Attr, "0.001">:$lr,
         DefaultValuedAttr<F64Attr, "0.9">:$beta1,
         DefaultValuedAttr<F64Attr, "0.999">:$beta2,
         DefaultValuedAttr<F64Attr, "1.0e-8">:$epsilon,
         DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
         UnitAttr:$decoupled), "adam"> {
  let description = [{
    With t = step + 1, g' = g + weight_decay · p (Adam's L2), or p ·= 1 -
    lr · weight_decay first with `decoupled` (AdamW): m = β1 m + (1 - β1)
    g', v = β2 v + (1 - β2) g'² (states `@<p>.<name>.m`, `.v`) and p -= lr
    / (1 - β1^t) · m / (√v / √(1 - β2^t) + ε), as torch.optim.Adam
    computes it.

    ```mlir
    grove.adam [@fc.weight] (%gw) {lr = 1.0e-03 : f64, decoupled,
        weight_decay = 1.0e-02 : f64} : tensor<10x64xf32>
    ```
  }];
  let extraClassDeclaration = [{
    ::llvm::SmallVector<::llvm::StringRef> getStateSlots() {
      return {"m", "v"};
    }
  }];
}

def Grove_AdagradOp : Grove_OptimizerOp<"adagrad",
    "Adagrad (PyTorch's torch.optim.Adagrad)",
    (ins DefaultValuedAttr<F64Attr, "0.01">:$lr,
         DefaultValuedAttr<F64Attr, "0.0">:$lr_decay,
         DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
         DefaultValuedAttr<F64Attr, "0.0">:$initial_accumulator_value,
         DefaultValuedAttr<F64Attr, "1.0e-10">:$epsilon), "adagrad"> {
  let description = [{
    With t = step + 1 and g' = g + weight_decay · p: s += g'² (state
    `@<p>.<name>.sum`, starting at `initial_accumulator_value`) and p -=
    lr / (1 + (t - 1) · lr_decay) · g' / (√s + ε), as torch.optim.Adagrad.
    Tai et al.'s Tree-LSTM trains with it.

    ```mlir
    grove.adagrad [@cell.w] (%gw) {lr = 5.0e-02 : f64,
        weight_decay = 1.0e-04 : f64} : tensor<150x300xf32>
    ```
  }];
  let extraClassDeclaration = [{
    ::llvm::SmallVector<::llvm::StringRef> getStateSlots() { return {"sum"}; }
    double getSlotInit(::llvm::StringRef) {
      return getInitialAccumulatorValue().convertToDouble();
    }
  }];
}

def Grove_LAMBOp : Grove_OptimizerOp<"lamb",
    "LAMB, layer-wise adaptive moments (NVIDIA Apex's FusedLAMB)",
    (ins DefaultValuedAttr<F64Attr, "0.001">:$lr,
         DefaultValuedAttr<F64Attr, "0.9">:$beta1,
         DefaultValuedAttr<F64Attr, "0.999">:$beta2,
         DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon,
         DefaultValuedAttr<F64Attr, "0.01">:$weight_decay,
         UnitAttr:$nvlamb,
         OptionalAttr<DenseF64ArrayAttr>:$weight_decays,
         OptionalAttr<DenseBoolArrayAttr>:$trust_mask), "lamb"> {
  let description = [{
    Per param, with t = step + 1: m = β1 m + (1 - β1) g, v = β2 v + (1 -
    β2) g², u = (m / (1 - β1^t)) / (√(v / (1 - β2^t)) + ε) + weight_decay ·
    p and p -= r · u, where the trust ratio r = lr · ‖p‖ / ‖u‖ when both
    norms are non-zero, else lr. As Apex's multi_tensor_lamb (decoupled
    decay, bias correction, gradient averaging), a param with weight_decay
    0 gets no trust ratio (r = lr) unless `nvlamb`. Apex clips by the
    global norm by default; here that is `max_grad_norm`.

    Parameter groups are one op: `weight_decays` (one per param) replaces
    `weight_decay` param by param, and `trust_mask` (one per param) says
    which params take the trust ratio, so BERT's decayed weights and its
    undecayed biases and LayerNorm params share one step and one global
    norm, as FusedLAMB's groups do.

    ```mlir
    grove.lamb [@fc.weight] (%gw) {lr = 1.0e-02 : f64} : tensor<10x64xf32>
    ```
  }];
  let extraClassDeclaration = [{
    ::llvm::SmallVector<::llvm::StringRef> getStateSlots() {
      return {"m", "v"};
    }
  }];
}

def Grove_LANSOp : Grove_OptimizerOp<"lans",
    "LANS, LAMB with normalized gradients and a Nesterov split (gluon-nlp)",
    (ins DefaultValuedAttr<F64Attr, "0.001">:$lr,
         DefaultValuedAttr<F64Attr, "0.9">:$beta1,
         DefaultValuedAttr<F64Attr, "0.999">:$beta2,
         DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon,
         DefaultValuedAttr<F64Attr, "0.01">:$weight_decay,
         OptionalAttr<DenseF64ArrayAttr>:$weight_decays,
         OptionalAttr<DenseBoolArrayAttr>:$trust_mask), "lans"> {
  let description = [{
    The fused kernel of gluon-nlp (`multi_tensor_lans.cu`, decoupled
    decay), per param, with t = step + 1 and the norms of g and p taken
    first: ĝ = g / (‖g‖ + ε), or g when ‖g‖ = 0; m = β1 m + (1 - β1) ĝ,
    v = β2 v + (1 - β2) ĝ²; d = √(v / (1 - β2^t)) + ε; u_m = (m / (1 -
    β1^t)) / d + λ p and u_g = ĝ / d + λ p (λ the weight_decay); r_x =
    lr · ‖p‖ / ‖u_x‖ when both norms are non-zero, else lr; p -= β1 r_m u_m
    + (1 - β1) r_g u_g. `weight_decays` and `trust_mask` (one entry per
    param) make parameter groups, as for grove.lamb; a param outside the
    trust mask takes r_x = lr.

    ```mlir
    grove.lans [@fc.weight] (%gw) lr(%lr : tensor<f32>) : tensor<10x64xf32>
    ```
  }];
  let extraClassDeclaration = [{
    ::llvm::SmallVector<::llvm::StringRef> getStateSlots() {
      return {"m", "v"};
    }
  }];
}

def Grove_AdaAlterOp : Grove_OptimizerOp<"adaalter",
    "AdaAlter, Adagrad with a lagged denominator (Xie et al.)",
    (ins DefaultValuedAttr<F64Attr, "0.01">:$lr,
         DefaultValuedAttr<F64Attr, "1.0e-7">:$epsilon,
         DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
         DefaultValuedAttr<I64Attr, "1">:$period,
         DefaultValuedAttr<I64Attr, "0">:$sync_warmup_steps), "adaalter"> {
  let description = [{
    p -= lr · (g / √(B + ε) + weight_decay · p), then the accumulator
    B' += g² (state `@<p>.<name>.accumulator`): the current g² never enters
    its own denominator. B is the accumulator as it was after the last
    step whose count t is a multiple of `period` (H), so with H = 1 it is
    gluon-nlp's `adaalter.py` (B lags one step); with H > 1 it is frozen
    between those steps in `@<p>.<name>.denominator` (Local AdaAlter:
    the averaging of p and B' across workers every H steps comes with the
    collectives).

    `sync_warmup_steps` (W, with H > 1; default 0) is the Local AdaAlter
    authors' `--warmup-steps`: the first W steps are fully synchronous
    AdaAlter, the denominator catching up after each (as with H = 1), and
    the period counts from there: B catches up at the steps t ≤ W and where
    t - W is a multiple of H. Under `--data-parallel` the gradients are
    averaged across the ranks during those W steps, and the params and
    accumulators at step W and every H steps after it.

    ```mlir
    grove.adaalter [@fc.weight] (%gw) {lr = 0.5 : f64, period = 4,
        sync_warmup_steps = 100} : tensor<10x64xf32>
    ```
  }];
  let extraClassDeclaration = [{
    ::llvm::SmallVector<::llvm::StringRef> getStateSlots() {
      if (getPeriod() == 1)
        return {"accumulator"};
      return {"accumulator", "denominator"};
    }
  }];
}

//===----------------------------------------------------------------------===//
// Learning-rate schedules
//===----------------------------------------------------------------------===//

def Grove_ScheduleKind : I32EnumAttr<"ScheduleKind", "a learning-rate schedule", [
    I32EnumAttrCase<"Constant", 0, "constant">,
    I32EnumAttrCase<"Polynomial", 1, "polynomial">,
    I32EnumAttrCase<"Cosine", 2, "cosine">,
    I32EnumAttrCase<"StepDecay", 3, "step_decay">]> {
  let cppNamespace = "::mlir::grove";
}

def Grove_LRScheduleOp : Grove_Op<"lr_schedule",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "a learning rate computed from a step count";
  let description = [{
    The learning rate after `step` updates (a rank-0 count, usually an
    optimizer's i64 `@<name>.step`, or a float), as Hugging Face transformers' schedules
    compute it. With W = `warmup_steps` and t < W it is lr · t / W; after
    that, with T = `total_steps` and progress q = min(1, (t - W) / (T - W)):

    * `constant`: lr;
    * `polynomial`: end_lr + (lr - end_lr) · (1 - q)^power (power 1 is the
      linear decay; the LANS/BERT schedule);
    * `cosine`: end_lr + (lr - end_lr) · (1 + cos(π q)) / 2;
    * `step_decay`: lr · gamma^⌊(t - W) / step_size⌋ (torch's StepLR).

    ```mlir
    %t = grove.get_param @lans.step : tensor<i64>
    %lr = grove.lr_schedule polynomial %t {lr = 5.0e-03 : f64,
        warmup_steps = 100, total_steps = 1000} : tensor<i64> -> tensor<f32>
    ```

    The rate is computed in the result's type from the count converted to
    it (exact below 2^24 steps in f32).
  }];
  let arguments = (ins TensorRankOf<[I64, I32, F32, F64], [0]>:$step,
                       Grove_ScheduleKind:$kind,
                       F64Attr:$lr,
                       DefaultValuedAttr<I64Attr, "0">:$warmup_steps,
                       DefaultValuedAttr<I64Attr, "0">:$total_steps,
                       DefaultValuedAttr<F64Attr, "0.0">:$end_lr,
                       DefaultValuedAttr<F64Attr, "1.0">:$power,
                       DefaultValuedAttr<I64Attr, "1">:$step_size,
                       DefaultValuedAttr<F64Attr, "0.1">:$gamma);
  let results = (outs TensorRankOf<[F32, F64], [0]>:$result);
  let assemblyFormat = [{
    $kind $step attr-dict `:` type($step) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Grove_ElasticLROp : Grove_Op<"elastic_lr",
    [Grove_NotDifferentiable, SameOperandsAndResultType,
     MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a learning rate scaled with the world, ramped after a change";
  let description = [{
    Elastic training: the global batch is the world size
    times each rank's batch, so the rate `lr` given for `base_world` ranks
    is scaled by the world the call runs in, `lr · w / base_world`; when
    the world changes (a job restarted from a checkpoint on other ranks),
    the scale ramps linearly from the old effective world to the new over
    `ramp_steps` calls instead of jumping (0: it jumps). The op keeps its
    state in `@<name>.world` (the world of the last call, 0 before the
    first), `@<name>.from` (the effective world the ramp starts from) and
    `@<name>.steps` (calls since the change), checkpointed with the rest.

    ```mlir
    %lr = grove.elastic_lr %base {base_world = 1, ramp_steps = 100} : tensor<f32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$lr,
                       ConfinedAttr<I64Attr, [IntPositive]>:$base_world,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$ramp_steps,
                       DefaultValuedAttr<StrAttr, "\"elastic\"">:$name);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = "$lr attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // GROVE_DIALECT_GROVE_IR_GROVETRAININGOPS_TD
