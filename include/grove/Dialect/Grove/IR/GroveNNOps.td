//===- GroveNNOps.td - Convolution, normalisation and pooling -------------===//
//
// The ops convolutional networks are written in (ResNeSt, docs/dialect.md).
// Layouts are NCHW (batch, channels, height, width); weights are
// FCKhKw (output channels, input channels per group, kernel height, width),
// as in PyTorch and ONNX.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVENNOPS_TD
#define GROVE_DIALECT_GROVE_IR_GROVENNOPS_TD

include "grove/Dialect/Grove/IR/GroveBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Grove_Conv2DOp : Grove_DiffOp<"conv2d", [Pure, Grove_RowWiseByRule,
                                            Grove_AutocastLow]> {
  let summary = "2-D convolution (NCHW), grouped, strided, padded, dilated";
  let description = [{
    `result[n, f, y, x] = bias[f] + Σ_{c, i, j} input[n, g·Cg + c,
    y·sh - pt + i·dh, x·sw - pl + j·dw] · weight[f, c, i, j]` with
    `g = f / (F / groups)`, `Cg = C / groups`, out-of-range input reading as
    zero. `padding` is `[top, left, bottom, right]`; output size
    `⌊(H + pt + pb - dh·(Kh - 1) - 1) / sh⌋ + 1` (likewise for W). The bias
    is optional.

    ```mlir
    %y = grove.conv2d %x, %w {groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>,
                              strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}
        : (tensor<?x64x56x56xf32>, tensor<128x32x3x3xf32>) -> tensor<?x128x56x56xf32>
    %z = grove.conv2d %x, %w, %b {groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>,
                                  strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>}
        : (tensor<?x64x56x56xf32>, tensor<256x64x1x1xf32>, tensor<256xf32>)
        -> tensor<?x256x28x28xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$input, Grove_FloatTensor:$weight,
                       Optional<Grove_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, I64Attr:$groups);
  let results = (outs Grove_FloatTensor:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$weight,
                   "::mlir::Value":$bias, "::llvm::ArrayRef<int64_t>":$strides,
                   "::llvm::ArrayRef<int64_t>":$padding,
                   "::llvm::ArrayRef<int64_t>":$dilations, "int64_t":$groups), [{
      build($_builder, $_state,
            inferConv2DType(input, weight, strides, padding, dilations), input,
            weight, bias, strides, padding, dilations, groups);
    }]>
  ];
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Grove_Conv2DWeightGradOp : Grove_Op<"conv2d_weight_grad",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "the weight gradient of grove.conv2d";
  let description = [{
    For `y = conv2d(input, w)` with these attributes and `output_grad` =
    dL/dy: `result[f, c, i, j] = Σ_{n, y, x} output_grad[n, f, y, x] ·
    input[n, g·Cg + c, y·sh - pt + i·dh, x·sw - pl + j·dw]` (out-of-range
    input reading as zero), `g = f / (F / groups)`; the result is the
    weight's type. conv2d's VJP emits it; its input gradient is a conv2d of
    the (dilated) output gradient with the flipped kernel.

    ```mlir
    %dw = grove.conv2d_weight_grad %x, %dy {groups = 1 : i64,
        padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>,
        dilations = array<i64: 1, 1>}
        : (tensor<?x3x8x8xf32>, tensor<?x4x8x8xf32>) -> tensor<4x3x3x3xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$input, Grove_FloatTensor:$output_grad,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       DenseI64ArrayAttr:$dilations, I64Attr:$groups);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $output_grad attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Grove_BatchNormOp : Grove_DiffOp<"batch_norm",
    [Pure, Grove_RowWiseByRule, Grove_AutocastWide]> {
  let summary = "batch normalisation with running statistics (inference)";
  let description = [{
    `(input - mean[c]) / sqrt(variance[c] + epsilon) · scale[c] + bias[c]`
    along dimension 1 (channels) of a rank ≥ 2 input: the inference form,
    whose statistics are operands (the running ones, read as state). The
    training form is `grove.batch_norm_training`.

    ```mlir
    %y = grove.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0e-05 : f64}
        : (tensor<?x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>,
           tensor<64xf32>) -> tensor<?x64x56x56xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$input, Grove_FloatTensor:$scale,
                       Grove_FloatTensor:$bias, Grove_FloatTensor:$mean,
                       Grove_FloatTensor:$variance, F64Attr:$epsilon);
  let results = (outs Grove_FloatTensor:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$scale,
                   "::mlir::Value":$bias, "::mlir::Value":$mean,
                   "::mlir::Value":$variance, "double":$epsilon), [{
      build($_builder, $_state, input.getType(), input, scale, bias, mean,
            variance, $_builder.getF64FloatAttr(epsilon));
    }]>
  ];
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Grove_BatchNormTrainingOp : Grove_DiffOp<"batch_norm_training",
    [MemoryEffects<[MemRead, MemWrite]>, Grove_AutocastWide,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "batch normalisation with batch statistics (training)";
  let description = [{
    Normalises each channel (dimension 1) of a rank ≥ 2 input by the mean
    and biased variance of the batch over every other dimension, then
    scales and shifts: `(x - μ_B) / sqrt(σ²_B + epsilon) · scale + bias`.
    It also updates the running statistics, module state the inference
    form reads: `running_mean = (1 - momentum) · running_mean + momentum ·
    μ_B`, and `running_var` likewise with the unbiased variance (n / (n-1)
    σ²_B, n the elements per channel), as torch.nn.BatchNorm2d in training
    mode. The update happens once per call, also inside
    `grove.value_and_grad` (whose forward runs once); the gradient flows
    through the batch statistics.

    ```mlir
    %y = grove.batch_norm_training %x, %scale, %bias {epsilon = 1.0e-05 : f64,
        momentum = 0.1 : f64, running_mean = @bn1.running_mean,
        running_var = @bn1.running_var}
        : (tensor<?x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>)
        -> tensor<?x16x8x8xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$input, Grove_FloatTensor:$scale,
                       Grove_FloatTensor:$bias,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon,
                       DefaultValuedAttr<F64Attr, "0.1">:$momentum,
                       FlatSymbolRefAttr:$running_mean,
                       FlatSymbolRefAttr:$running_var);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

class Grove_Pool2DOp<string mnemonic, string what>
    : Grove_DiffOp<mnemonic, [Pure, Grove_RowWiseByRule,
                              Grove_AutocastFollow]> {
  let summary = what # " pooling over 2-D windows (NCHW)";
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Grove_MaxPool2DOp : Grove_Pool2DOp<"max_pool2d", "maximum"> {
  let description = [{
    Windows of `kernel = [kh, kw]` every `strides`, with `padding = [top,
    left, bottom, right]` that never wins (−∞). Output size
    `⌊(H + pt + pb - kh) / sh⌋ + 1`, or with `ceil_mode` the ceiling, where
    a last window must start inside the input or the top/left padding (as
    in PyTorch).
  }];
  let arguments = (ins Grove_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       UnitAttr:$ceil_mode);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$kernel,
                   "::llvm::ArrayRef<int64_t>":$strides,
                   "::llvm::ArrayRef<int64_t>":$padding,
                   CArg<"bool", "false">:$ceilMode), [{
      build($_builder, $_state,
            inferWindowedType(input, poolChannels(input), kernel, strides,
                              padding, ceilMode),
            input, kernel, strides, padding, ceilMode);
    }]>
  ];
}

def Grove_MaxPool2DWithIndicesOp
    : Grove_Op<"max_pool2d_with_indices", [Pure, Grove_NotDifferentiable]> {
  let summary = "maximum pooling that also gives each window's winner";
  let description = [{
    `grove.max_pool2d`, and for each output element the place of the window
    element that won, `i · kw + j`: the first maximum, or the last NaN
    (PyTorch's rule; the result is that element too). The pool's gradient
    reads them (`grove.max_pool2d_grad ... indices`) instead of searching
    each window again; grove-expand-training-ops forms the pair.

    ```mlir
    %y, %idx = grove.max_pool2d_with_indices %x {kernel = array<i64: 2, 2>,
        strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 0, 0>}
        : (tensor<?x16x8x8xf32>) -> (tensor<?x16x4x4xf32>, tensor<?x16x4x4xi32>)
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       UnitAttr:$ceil_mode);
  let results = (outs Grove_FloatTensor:$result,
                      RankedTensorOf<[I32]>:$indices);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Grove_AvgPool2DOp : Grove_Pool2DOp<"avg_pool2d", "average"> {
  let description = [{
    As `max_pool2d` for the windows. The divisor is the window size with
    `count_include_pad` (zero padding counts), else the number of input
    elements the window covers; the part of a `ceil_mode` window beyond the
    padding never counts (PyTorch's rules).
  }];
  let arguments = (ins Grove_FloatTensor:$input, DenseI64ArrayAttr:$kernel,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$padding,
                       UnitAttr:$ceil_mode, UnitAttr:$count_include_pad);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$kernel,
                   "::llvm::ArrayRef<int64_t>":$strides,
                   "::llvm::ArrayRef<int64_t>":$padding,
                   CArg<"bool", "false">:$ceilMode,
                   CArg<"bool", "false">:$countIncludePad), [{
      build($_builder, $_state,
            inferWindowedType(input, poolChannels(input), kernel, strides,
                              padding, ceilMode),
            input, kernel, strides, padding, ceilMode, countIncludePad);
    }]>
  ];
}

// The input gradient of a pool: `result` (the input's type) gathers, for
// each input element, the output gradients of the windows that cover it.
class Grove_Pool2DGradOp<string mnemonic, string what>
    : Grove_Op<mnemonic, [Pure, Grove_NotDifferentiable]> {
  let summary = "the input gradient of " # what;
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $output_grad attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Grove_MaxPool2DGradOp : Grove_Pool2DGradOp<"max_pool2d_grad",
                                               "grove.max_pool2d"> {
  let description = [{
    Each window's output gradient goes to the first element (row-major in
    the window) holding the window's maximum, or its last NaN, as PyTorch's
    max_pool2d backward does; the attributes are the pool's. With
    `indices` (`grove.max_pool2d_with_indices`'s, the output's shape) the
    winners are read, not searched for.

    ```mlir
    %dx = grove.max_pool2d_grad %x, %dy {kernel = array<i64: 3, 3>,
        strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
        : (tensor<?x64x112x112xf32>, tensor<?x64x56x56xf32>) -> tensor<?x64x112x112xf32>
    %dx2 = grove.max_pool2d_grad %x, %dy indices %idx {...}
        : (tensor<?x64x112x112xf32>, tensor<?x64x56x56xf32>, tensor<?x64x56x56xi32>)
        -> tensor<?x64x112x112xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$input, Grove_FloatTensor:$output_grad,
                       Optional<RankedTensorOf<[I32]>>:$indices,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$padding, UnitAttr:$ceil_mode);
  let assemblyFormat = [{
    $input `,` $output_grad (`indices` $indices^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def Grove_AvgPool2DGradOp : Grove_Pool2DGradOp<"avg_pool2d_grad",
                                               "grove.avg_pool2d"> {
  let description = [{
    Each window's output gradient divided by the window's divisor (the
    pool's rules) goes to every input element the window covers; `input`
    gives the shape.
  }];
  let arguments = (ins Grove_FloatTensor:$input, Grove_FloatTensor:$output_grad,
                       DenseI64ArrayAttr:$kernel, DenseI64ArrayAttr:$strides,
                       DenseI64ArrayAttr:$padding, UnitAttr:$ceil_mode,
                       UnitAttr:$count_include_pad);
}

def Grove_GlobalAvgPoolOp : Grove_DiffOp<"global_avg_pool",
    [Pure, Grove_RowWiseByRule, Grove_AutocastFollow]> {
  let summary = "mean over all spatial positions: N×C×H×W → N×C×1×1";
  let arguments = (ins Grove_FloatTensor:$input);
  let results = (outs Grove_FloatTensor:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input), [{
      build($_builder, $_state, inferGlobalAvgPoolType(input), input);
    }]>
  ];
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Grove_FlattenOp : Grove_DiffOp<"flatten", [Pure, Grove_RowWiseByRule,
                                              Grove_AutocastFollow]> {
  let summary = "collapses the dimensions from `axis` on into one";
  let description = [{
    `N×C×1×1 → N×C` for `axis = 1`; at most one dynamic dimension may be
    collapsed (the batch is usually the only dynamic one and stays).
  }];
  let arguments = (ins Grove_AnyTensor:$input, I64Attr:$axis);
  let results = (outs Grove_AnyTensor:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "int64_t":$axis), [{
      build($_builder, $_state, inferFlattenType(input, axis), input, axis);
    }]>
  ];
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Grove_SplitAttentionOp : Grove_DiffOp<"split_attention", [Pure]> {
  let summary = "ResNeSt's split attention over radix splits (SplAtConv2d)";
  let description = [{
    The attention part of ResNeSt's `SplAtConv2d` (docs/dialect.md), applied
    to `input` = U, the grouped convolution's output after BN and ReLU, of
    shape B × (C·R) × H × W with R = `radix` splits of C channels
    (radix-major) and K = `cardinality` groups:

    1. Û = Σ_r U_r, s = mean of Û over H, W (B × C);
    2. z = ReLU(BN(fc1(s))): fc1 a 1×1 convolution C → I in K groups with
       bias (`fc1_weight` I × C/K × 1 × 1), BN with running statistics
       (`bn_*`, `epsilon`);
    3. logits = fc2(z): 1×1 convolution I → C·R in K groups with bias
       (`fc2_weight` C·R × I/K × 1 × 1), cardinal-major (K, R, C/K);
    4. rSoftMax: softmax over R after reordering to radix-major (R, K, C/K),
       or a sigmoid when R = 1, giving weights a_r (B × C each);
    5. result = Σ_r a_r ⊙ U_r (a_r broadcast over H, W): B × C × H × W.

    `grove-fuse-split-attention` forms this op from the primitive ops a
    frontend emits; lowering it reads U twice (pooling, weighted sum). Its
    VJP is one grove.split_attention_grad, which reads U once.
    The radix is at most 16: the lowering unrolls it (every output element
    is written once, each GPU kernel takes the R weights as arguments), and
    ResNeSt uses 1, 2 or 4; a larger radix stays in primitive ops.
  }];
  let arguments = (ins Grove_FloatTensor:$input, Grove_FloatTensor:$fc1_weight,
                       Grove_FloatTensor:$fc1_bias, Grove_FloatTensor:$bn_scale,
                       Grove_FloatTensor:$bn_bias, Grove_FloatTensor:$bn_mean,
                       Grove_FloatTensor:$bn_variance,
                       Grove_FloatTensor:$fc2_weight,
                       Grove_FloatTensor:$fc2_bias, I64Attr:$radix,
                       I64Attr:$cardinality, F64Attr:$epsilon);
  let results = (outs Grove_FloatTensor:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$fc1_weight,
                   "::mlir::Value":$fc1_bias, "::mlir::Value":$bn_scale,
                   "::mlir::Value":$bn_bias, "::mlir::Value":$bn_mean,
                   "::mlir::Value":$bn_variance, "::mlir::Value":$fc2_weight,
                   "::mlir::Value":$fc2_bias, "int64_t":$radix,
                   "int64_t":$cardinality, "double":$epsilon), [{
      build($_builder, $_state, inferSplitAttentionType(input, radix), input,
            fc1_weight, fc1_bias, bn_scale, bn_bias, bn_mean, bn_variance,
            fc2_weight, fc2_bias, $_builder.getI64IntegerAttr(radix),
            $_builder.getI64IntegerAttr(cardinality),
            $_builder.getF64FloatAttr(epsilon));
    }]>
  ];
  let assemblyFormat = [{
    $input `,` $fc1_weight `,` $fc1_bias `,` $bn_scale `,` $bn_bias `,`
    $bn_mean `,` $bn_variance `,` $fc2_weight `,` $fc2_bias attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// C: output channels (U has C·R).
    int64_t getChannels();
    /// I: the inner width of the attention MLP.
    int64_t getInterChannels();
  }];
}

def Grove_SplitAttentionGradOp : Grove_Op<"split_attention_grad",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "the backward of grove.split_attention, fused";
  let description = [{
    For `y = split_attention(input, ...)` with the same operands and
    attributes and `result_grad` = dL/dy: the gradients of the input (U)
    and of the six trainable operands, each of its operand's type
    (split_attention's VJP derives those of `bn_mean` and `bn_variance`
    from `bn_scale_grad`). Lowering reads U once, in one pass that sums its
    splits and takes each split's inner product with `result_grad`; the
    attention MLP is recomputed and differentiated at B x C size, and a
    second pass writes `input_grad` = a_r ⊙ dL/dy + (the pool's gradient)
    / (H·W) from `result_grad` alone (docs/training.md).

    ```mlir
    %du, %dw1, %db1, %dg, %dbeta, %dw2, %db2 = grove.split_attention_grad
        %dy, %u, %w1, %b1, %g, %beta, %mean, %var, %w2, %b2
        {radix = 2 : i64, cardinality = 1 : i64, epsilon = 1.0e-05 : f64}
        : (tensor<?x8x4x4xf32>, tensor<?x16x4x4xf32>, ...) -> (...)
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$result_grad,
                       Grove_FloatTensor:$input, Grove_FloatTensor:$fc1_weight,
                       Grove_FloatTensor:$fc1_bias, Grove_FloatTensor:$bn_scale,
                       Grove_FloatTensor:$bn_bias, Grove_FloatTensor:$bn_mean,
                       Grove_FloatTensor:$bn_variance,
                       Grove_FloatTensor:$fc2_weight,
                       Grove_FloatTensor:$fc2_bias, I64Attr:$radix,
                       I64Attr:$cardinality, F64Attr:$epsilon);
  let results = (outs Grove_FloatTensor:$input_grad,
                      Grove_FloatTensor:$fc1_weight_grad,
                      Grove_FloatTensor:$fc1_bias_grad,
                      Grove_FloatTensor:$bn_scale_grad,
                      Grove_FloatTensor:$bn_bias_grad,
                      Grove_FloatTensor:$fc2_weight_grad,
                      Grove_FloatTensor:$fc2_bias_grad);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$result_grad,
                   "::mlir::grove::SplitAttentionOp":$forward), [{
      build($_builder, $_state,
            ::mlir::TypeRange{forward.getInput().getType(),
                              forward.getFc1Weight().getType(),
                              forward.getFc1Bias().getType(),
                              forward.getBnScale().getType(),
                              forward.getBnBias().getType(),
                              forward.getFc2Weight().getType(),
                              forward.getFc2Bias().getType()},
            result_grad, forward.getInput(), forward.getFc1Weight(),
            forward.getFc1Bias(), forward.getBnScale(), forward.getBnBias(),
            forward.getBnMean(), forward.getBnVariance(),
            forward.getFc2Weight(), forward.getFc2Bias(),
            forward.getRadixAttr(), forward.getCardinalityAttr(),
            forward.getEpsilonAttr());
    }]>
  ];
  let assemblyFormat = [{
    $result_grad `,` $input `,` $fc1_weight `,` $fc1_bias `,` $bn_scale `,`
    $bn_bias `,` $bn_mean `,` $bn_variance `,` $fc2_weight `,` $fc2_bias
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getChannels();
    int64_t getInterChannels();
  }];
}

#endif // GROVE_DIALECT_GROVE_IR_GROVENNOPS_TD
