//===- GroveTransformerOps.td - Layer norm and embeddings -----------------===//
//
// The ops transformers are written in besides matmuls and elementwise math
// (BERT-style encoders, docs/bert.md). Sequences are [batch, length,
// hidden]; a layer norm normalises the trailing dimensions its scale has.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVETRANSFORMEROPS_TD
#define GROVE_DIALECT_GROVE_IR_GROVETRANSFORMEROPS_TD

include "grove/Dialect/Grove/IR/GroveBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Grove_LayerNormOp : Grove_DiffOp<"layer_norm",
    [Pure, Grove_RowWiseByRule, Grove_AutocastWide]> {
  let summary = "normalisation over the trailing dimensions, scaled and shifted";
  let description = [{
    The trailing dimensions that `scale` and `bias` have (both of one
    shape) form a row of n elements: `(x - μ) / sqrt(σ² + epsilon) · scale
    + bias` with μ and σ² the row's mean and biased variance, as
    torch.nn.functional.layer_norm with `normalized_shape` those
    dimensions. bf16 and f16 rows are summed in f32. Its VJP is one
    `grove.layer_norm_grad`.

    ```mlir
    %y = grove.layer_norm %x, %g, %b {epsilon = 1.0e-12 : f64}
        : (tensor<?x128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<?x128x256xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$input, Grove_FloatTensor:$scale,
                       Grove_FloatTensor:$bias,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The leading dimensions: each index into them is one row.
    int64_t getNumRowDims() {
      return getInput().getType().getRank() - getScale().getType().getRank();
    }
  }];
}

def Grove_LayerNormGradOp : Grove_Op<"layer_norm_grad",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "the gradients of grove.layer_norm";
  let description = [{
    For `y = layer_norm(input, scale, bias)` with this epsilon and
    `output_grad` = dL/dy: the input's, scale's and bias's gradients. With
    x̂ the normalised row and r = 1 / sqrt(σ² + epsilon):
    `dx = r · (dy·scale - mean(dy·scale) - x̂ · mean(dy·scale · x̂))` per
    row, `dscale = Σ_rows dy · x̂`, `dbias = Σ_rows dy`. Each row's
    statistics are recomputed from the row (one pass), nothing larger.

    ```mlir
    %dx, %ds, %db = grove.layer_norm_grad %dy, %x, %g {epsilon = 1.0e-12 : f64}
        : (tensor<?x128x256xf32>, tensor<?x128x256xf32>, tensor<256xf32>)
        -> (tensor<?x128x256xf32>, tensor<256xf32>, tensor<256xf32>)
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$output_grad, Grove_FloatTensor:$input,
                       Grove_FloatTensor:$scale,
                       DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon);
  let results = (outs Grove_FloatTensor:$input_grad,
                      Grove_FloatTensor:$scale_grad,
                      Grove_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $output_grad `,` $input `,` $scale attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Grove_EmbeddingOp : Grove_DiffOp<"embedding", [Pure, Grove_AutocastFollow]> {
  let summary = "rows of a table by integer ids (an embedding lookup)";
  let description = [{
    `result[i..., d] = table[ids[i...], d]` for ids of any rank: the result
    is the ids' shape followed by the table's row size. An id outside
    `[0, rows)` reads zeros, never out of bounds; an entry's argument used
    as ids is checked at the ABI to lie in `[0, rows)` (`below`), as labels
    are, so such a call fails before it runs, unless the lookup is
    `unchecked` (what `one_hot(ids) @ table` becomes: one_hot's labels are
    not checked, and out of range they give zeros). Its VJP, the table's
    gradient, sums the output gradient's rows per id without atomics:
    `grove.group_by_index` sorts the positions by id, `grove.gather` moves
    the rows into that order, `grove.segment_sum` adds each id's rows.

    ```mlir
    %e = grove.embedding %table, %ids
        : (tensor<8192x128xf32>, tensor<?x128xi32>) -> tensor<?x128x128xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$table, RankedTensorOf<[I32]>:$ids,
                       UnitAttr:$unchecked);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $ids attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Grove_AttentionOp : Grove_DiffOp<"attention",
    [Pure, Grove_AutocastLow]> {
  let summary = "scaled dot-product attention, never holding all the scores";
  let description = [{
    `softmax(scale · Q Kᵀ + mask) V` per batch and head, as
    torch.nn.functional.scaled_dot_product_attention: `query` is [B, H, Sq,
    D], `key` [B, H, Sk, D], `value` [B, H, Sk, Dv], the result [B, H, Sq,
    Dv]. `scale` defaults to 1/√D. The optional additive `mask` is rank 4
    and broadcasts to [B, H, Sq, Sk] (each dimension its size or a static
    1: a padding mask is [B, 1, 1, Sk]); `causal` masks key j > query i
    (top-left aligned, torch's `is_causal`). A row whose keys are all
    masked gives NaN, as torch does.

    grove-tile-attention computes it over tiles of `key_tile` keys with
    FlashAttention's online softmax (a running maximum and sum per query
    row), so no more than [B·H, Sq, key_tile] scores exist at once: memory
    grows linearly with the sequence. Its VJP is one
    `grove.attention_grad`, which recomputes the tiles instead of storing
    the probabilities. bf16/f16 inputs are computed in f32.

    ```mlir
    %o = grove.attention %q, %k, %v mask(%m : tensor<?x1x1x128xf32>)
        {scale = 1.250000e-01 : f64}
        : (tensor<?x4x128x64xf32>, tensor<?x4x128x64xf32>,
           tensor<?x4x128x64xf32>) -> tensor<?x4x128x64xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$query, Grove_FloatTensor:$key,
                       Grove_FloatTensor:$value,
                       Optional<Grove_FloatTensor>:$mask,
                       OptionalAttr<F64Attr>:$scale, UnitAttr:$causal,
                       DefaultValuedAttr<I64Attr, "128">:$key_tile);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $mask^ `:` type($mask) `)`)?
    attr-dict `:` `(` type($query) `,` type($key) `,` type($value) `)`
    `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `scale`, or 1/√D.
    double getScaleOrDefault();
  }];
}

def Grove_AttentionGradOp : Grove_Op<"attention_grad",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "the gradients of grove.attention, recomputing its tiles";
  let description = [{
    For `output = attention(query, key, value, mask)` with these attributes
    and `output_grad` = dL/doutput: the query's, key's and value's
    gradients (FlashAttention-2's backward). Each row's log-sum-exp is
    recomputed over the key tiles, then each tile's probabilities P; with
    Δ = rowsum(dO ∘ O): dV += Pᵀ dO, dS = P ∘ (dO Vᵀ - Δ), dQ += scale ·
    dS K, dK += scale · dSᵀ Q. The mask gets no gradient.

    ```mlir
    %dq, %dk, %dv = grove.attention_grad %do, %q, %k, %v, %o
        : (tensor<?x4x128x64xf32>, tensor<?x4x128x64xf32>, tensor<?x4x128x64xf32>,
           tensor<?x4x128x64xf32>, tensor<?x4x128x64xf32>)
        -> (tensor<?x4x128x64xf32>, tensor<?x4x128x64xf32>, tensor<?x4x128x64xf32>)
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$output_grad, Grove_FloatTensor:$query,
                       Grove_FloatTensor:$key, Grove_FloatTensor:$value,
                       Grove_FloatTensor:$output,
                       Optional<Grove_FloatTensor>:$mask,
                       OptionalAttr<F64Attr>:$scale, UnitAttr:$causal,
                       DefaultValuedAttr<I64Attr, "128">:$key_tile);
  let results = (outs Grove_FloatTensor:$query_grad,
                      Grove_FloatTensor:$key_grad,
                      Grove_FloatTensor:$value_grad);
  let assemblyFormat = [{
    $output_grad `,` $query `,` $key `,` $value `,` $output
    (`mask` `(` $mask^ `:` type($mask) `)`)? attr-dict `:` `(`
    type($output_grad) `,` type($query) `,` type($key) `,` type($value) `,`
    type($output) `)` `->` `(` type($query_grad) `,` type($key_grad) `,`
    type($value_grad) `)`
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// `scale`, or 1/√D, as grove.attention's.
    double getScaleOrDefault();
  }];
}

def Grove_DropoutOp : Grove_DiffOp<"dropout", [MemoryEffects<[MemRead]>,
    Grove_AutocastFollow,
    SameOperandsAndResultType]> {
  let summary = "zeroes elements at random, scales the others by 1/(1 - rate)";
  let description = [{
    Each element is kept with probability 1 - `rate` and scaled by 1 / (1 -
    rate), or zeroed (torch.nn.functional.dropout in training). The draw is
    counter based (Philox4x32-10): element i of the input (row-major) keeps
    where the top 24 bits of Philox(counter (i, offset), key k) over 2^24
    are at least `rate`, k being the stream's key, the first two words of
    Philox(counter (`stream`, 0), key seed). Seed and
    offset are the state `@<generator>.seed` and `@<generator>.offset` (i64,
    zero-initialised, declared by grove-expand-training-ops where the module
    does not): a function that draws advances the offset by one per call,
    so every call draws new masks, the checkpoint holds the generator, and a
    resumed run draws the same masks; the mask never depends on the
    thread count. Ops of one function with one generator and stream draw
    one mask: give each dropout its own stream. Inside
    `grove.value_and_grad`, the copies a function called more than once
    inlines draw apart (grove-autodiff adds k · 2^32 to the stream of the
    k-th repeat). Its VJP is the same dropout of the cotangent (the same
    mask, recomputed, never stored).

    ```mlir
    %y = grove.dropout %x {rate = 1.0e-01 : f64, stream = 3 : i64}
        : tensor<?x128x256xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$input, F64Attr:$rate,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$stream,
                       DefaultValuedAttr<StrAttr, "\"dropout\"">:$generator);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    std::string getSeedName() { return (getGenerator() + ".seed").str(); }
    std::string getOffsetName() { return (getGenerator() + ".offset").str(); }
  }];
}

// A generator's seed or offset: a rank-0 i64 (buildable, so the assembly
// format need not spell it).
def Grove_Counter : TensorRankOf<[I64], [0]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI64Type())";
}

def Grove_PhiloxDropoutOp : Grove_Op<"philox_dropout",
    [Pure, Grove_NotDifferentiable,
     AllTypesMatch<["input", "result"]>]> {
  let summary = "grove.dropout with its generator's seed and offset as operands";
  let description = [{
    What grove-expand-training-ops makes of a `grove.dropout` (whose
    description gives the draw): the seed and the offset are rank-0 i64
    operands read from the generator's state, so the op is pure and lowers
    to one elementwise loop.

    ```mlir
    %y = grove.philox_dropout %x, %seed, %offset {rate = 1.0e-01 : f64, stream = 3 : i64}
        : tensor<?x256xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$input, Grove_Counter:$seed,
                       Grove_Counter:$offset, F64Attr:$rate,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$stream);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $seed `,` $offset attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

#endif // GROVE_DIALECT_GROVE_IR_GROVETRANSFORMEROPS_TD
