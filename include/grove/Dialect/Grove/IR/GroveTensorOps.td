//===- GroveTensorOps.td - Constants, data movement, general ops ----------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVETENSOROPS_TD
#define GROVE_DIALECT_GROVE_IR_GROVETENSOROPS_TD

include "grove/Dialect/Grove/IR/GroveBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Grove_ConstantOp : Grove_Op<"constant",
    [ConstantLike, Pure, AllTypesMatch<["value", "result"]>,
     Grove_NotDifferentiable]> {
  let summary = "a constant tensor";
  let description = [{
    ```mlir
    %c = grove.constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Grove_AnyTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

def Grove_ReshapeOp : Grove_DiffOp<"reshape", [Pure, Grove_RowWiseByRule,
                                              Grove_AutocastFollow]> {
  let summary = "reinterprets a tensor with a new shape (row-major order)";
  let description = [{
    Element count is preserved. The result may have at most one dynamic
    dimension, whose size is the input's element count divided by the
    product of the static result dimensions.

    ```mlir
    %r = grove.reshape %x : tensor<?x64xf32> -> tensor<?x8x8xf32>
    ```
  }];
  let arguments = (ins Grove_AnyTensor:$input);
  let results = (outs Grove_AnyTensor:$result);
  let builders = [
    // `shape` uses ShapedType::kDynamic for the one dynamic dimension.
    OpBuilder<(ins "::mlir::Value":$input,
                   "::llvm::ArrayRef<int64_t>":$shape), [{
      build($_builder, $_state, ::mlir::RankedTensorType::get(shape,
            ::mlir::getElementTypeOrSelf(input.getType())), input);
    }]>
  ];
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Grove_TransposeOp : Grove_DiffOp<"transpose",
    [Pure, Grove_RowWiseByRule, Grove_AutocastFollow]> {
  let summary = "permutes the dimensions of a tensor";
  let description = [{
    Result dimension `i` is input dimension `permutation[i]`.

    ```mlir
    %t = grove.transpose %x [1, 0] : tensor<?x64xf32> -> tensor<64x?xf32>
    ```
  }];
  let arguments = (ins Grove_AnyTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Grove_AnyTensor:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input,
                   "::llvm::ArrayRef<int64_t>":$permutation), [{
      build($_builder, $_state, inferTransposeType(input, permutation), input,
            permutation);
    }]>
  ];
  let assemblyFormat = [{
    $input $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Grove_ConcatOp : Grove_DiffOp<"concat", [Pure, Grove_RowWiseByRule,
                                            Grove_AutocastFollow]> {
  let summary = "concatenates tensors along an axis";
  let description = [{
    All inputs have the same rank and element type and agree on every
    dimension but `axis`.

    ```mlir
    %c = grove.concat %a, %b {axis = 1 : i64}
        : (tensor<?x3xf32>, tensor<?x5xf32>) -> tensor<?x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Grove_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs Grove_AnyTensor:$result);
  let builders = [
    OpBuilder<(ins "::mlir::ValueRange":$inputs, "int64_t":$axis), [{
      build($_builder, $_state, inferConcatType(inputs, axis), inputs, axis);
    }]>
  ];
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, $result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Grove_SliceOp : Grove_DiffOp<"slice", [Pure, Grove_RowWiseByRule,
                                          Grove_AutocastFollow]> {
  let summary = "extracts a strided slice";
  let description = [{
    For each dimension, takes indices `start, start + stride, ...` below
    `limit`. A `limit` of -1 means the end of the dimension. A dynamic
    dimension can only be sliced to its end; a `start` past its run-time
    size gives an empty result, as in numpy.

    ```mlir
    %s = grove.slice %x [0, 2] [-1, 6] [1, 2]
        : tensor<?x8xf32> -> tensor<?x2xf32>
    ```
  }];
  let arguments = (ins Grove_AnyTensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$limits, DenseI64ArrayAttr:$strides);
  let results = (outs Grove_AnyTensor:$result);
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$starts,
                   "::llvm::ArrayRef<int64_t>":$limits,
                   "::llvm::ArrayRef<int64_t>":$strides), [{
      build($_builder, $_state,
            inferSliceType(input, starts, limits, strides), input, starts,
            limits, strides);
    }]>
  ];
  let assemblyFormat = [{
    $input $starts $limits $strides attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Grove_BroadcastToOp : Grove_DiffOp<"broadcast_to",
    [Pure, Grove_RowWiseByRule, Grove_AutocastFollow]> {
  let summary = "broadcasts a tensor to a shape (numpy rules)";
  let description = [{
    Input dimensions align with the trailing result dimensions; each is 1
    or equal to the result dimension. One index operand gives the size of
    each dynamic result dimension, in order.

    ```mlir
    %b = grove.broadcast_to %bias (%n) : tensor<10xf32> -> tensor<?x10xf32>
    ```
  }];
  let arguments = (ins Grove_AnyTensor:$input, Variadic<Index>:$dynamic_sizes);
  let results = (outs Grove_AnyTensor:$result);
  let builders = [
    // `shape` uses ShapedType::kDynamic where `dynamicSizes` give the size.
    OpBuilder<(ins "::mlir::Value":$input, "::llvm::ArrayRef<int64_t>":$shape,
                   CArg<"::mlir::ValueRange", "{}">:$dynamicSizes), [{
      build($_builder, $_state, ::mlir::RankedTensorType::get(shape,
            ::mlir::getElementTypeOrSelf(input.getType())), input,
            dynamicSizes);
    }]>
  ];
  let assemblyFormat = [{
    $input (`(` $dynamic_sizes^ `)`)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Grove_ReverseOp : Grove_DiffOp<"reverse",
    [Pure, SameOperandsAndResultType, Grove_RowWiseByRule,
     Grove_AutocastFollow]> {
  let summary = "reverses a tensor along static axes";
  let description = [{
    `result[..., i, ...] = input[..., n - 1 - i, ...]` along each of `axes`
    (distinct, in range, static); a convolution's input gradient flips its
    kernel with it.

    ```mlir
    %f = grove.reverse %w [2, 3] : tensor<64x32x3x3xf32>
    ```
  }];
  let arguments = (ins Grove_AnyTensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Grove_AnyTensor:$result);
  let assemblyFormat = "$input $axes attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Grove_AgreeDimsOp : Grove_Op<"agree_dims",
    [MemoryEffects<[MemWrite]>, Grove_NotDifferentiable]> {
  let summary = "checks at run time that two dynamic sizes are equal";
  let description = [{
    Emitted by lowerings where the IR assumes two dynamic sizes agree
    (elementwise operands, contraction and batch dimensions, concat inputs)
    but the types cannot prove it. Returns the smaller size; when they
    differ it reports `message` to the runtime, so the call fails with
    GROVE_ERROR_INVALID_ARGUMENT instead of reading out of bounds.

    ```mlir
    %n = grove.agree_dims %a, %b, "grove.add operands, dimension 0" : index
    ```

    With `at_least`, `lhs` is `max(rhs, least)` for a least size `rhs` may
    have, and a failure reads "<message> of at least <lhs>, got <rhs>" (a
    window larger than a dynamic input).
  }];
  let arguments = (ins Index:$lhs, Index:$rhs, StrAttr:$message,
                       UnitAttr:$at_least);
  let results = (outs Index:$result);
  let assemblyFormat = "$lhs `,` $rhs `,` $message attr-dict `:` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// General ops several features use: region terminator, row gathers and
// sums, selection, random draws.
//===----------------------------------------------------------------------===//

def Grove_YieldOp : Grove_Op<"yield",
    [Pure, Terminator, ReturnLike,
     ParentOneOf<["ValueAndGradOp", "TreeFoldOp", "TreeFoldGradOp"]>,
     Grove_NotDifferentiable]> {
  let summary = "ends a grove region op's body with its value";
  let arguments = (ins Variadic<Grove_AnyTensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def Grove_GatherOp : Grove_DiffOp<"gather", [Pure, Grove_AutocastFollow]> {
  let summary = "rows of a tensor by index; a negative index gives zeros";
  let description = [{
    `result[i, ...] = input[indices[i], ...]`, or zeros where
    `indices[i] < 0` (or past the input's rows: never read out of
    bounds). The tree lowerings move rows with it, and a masked language
    model picks its masked positions with it. Its VJP sums the cotangent's
    rows per index without atomics, as `grove.embedding`'s does
    (`grove.group_by_index`, then a gather and a `grove.segment_sum`); it
    needs the input's rows static. Rows gathered by a forest's `position`
    and back by its `order` (two inverse permutations from one
    `grove.tree_schedule`, or two of the same operands) fold to the rows
    themselves: a fold's gradient reads its states in the order the fold
    computed them.

    ```mlir
    %r = grove.gather %h, %idx : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins Grove_AnyTensor:$input, Grove_IndexList:$indices);
  let results = (outs Grove_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` `(` type($input) `,` type($indices) `)`
    `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$indices)>
  ];
  let hasFolder = 1;
  let hasVerifier = 1;
}

def Grove_SegmentSumOp : Grove_Op<"segment_sum",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "sums of consecutive rows, segment by segment";
  let description = [{
    `result[p, ...] = sum of input[e, ...]` for `e` from `offsets[p] -
    offsets[0]` to `offsets[p + 1] - offsets[0]` (exclusive): CSR
    segments whose first offset is where the input starts (a slice of a
    larger edge list). The result has one row fewer than `offsets`; rows
    past the input are not read. A child-sum fold sums each node's
    children's messages with it.

    ```mlir
    %s = grove.segment_sum %m, %off : (tensor<?x16xf32>, tensor<?xi32>) -> tensor<?x16xf32>
    ```
  }];
  let arguments = (ins Grove_FloatTensor:$input, Grove_IndexList:$offsets);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $offsets attr-dict `:` `(` type($input) `,` type($offsets) `)`
    `->` type($result)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::Value":$offsets)>
  ];
  let hasVerifier = 1;
}

def Grove_GroupByIndexOp : Grove_Op<"group_by_index",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "positions sorted by their index, with each index's offsets";
  let description = [{
    A stable counting sort of `indices` (rank 1) by value: `order` lists
    the positions `j` with `indices[j] = 0` first, then those with 1, up
    to `num_groups - 1`, then the positions whose index is outside `[0,
    num_groups)`; `offsets[g]` is where group `g` starts in `order` and
    `offsets[num_groups]` where the groups end. `grove.gather` by `order`
    and `grove.segment_sum` by `offsets` so add up the rows of each index
    without atomics (an embedding's gradient). One runtime call
    (`grove_rt_group_by_index`), linear in the positions and the groups.

    ```mlir
    %order, %offsets = grove.group_by_index %ids {num_groups = 8192}
        : tensor<?xi32> -> (tensor<?xi32>, tensor<8193xi32>)
    ```
  }];
  let arguments = (ins Grove_IndexList:$indices,
                       ConfinedAttr<I64Attr, [IntPositive]>:$num_groups);
  let results = (outs Grove_IndexList:$order, Grove_IndexList:$offsets);
  let assemblyFormat = [{
    $indices attr-dict `:` type($indices) `->` `(` type($order) `,`
    type($offsets) `)`
  }];
  let hasVerifier = 1;
}

def Grove_ScatterAddOp : Grove_Op<"scatter_add",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "adds values into a flat tensor at indices";
  let description = [{
    `result = base`, then `result[indices[j]] += values[j]` for every
    element j of `indices` and `values` (one shape, any rank), in order;
    an index outside the base is skipped. Decompresses what top-k
    compressors gathered from every rank (a sequential loop: two ranks may
    send one index).

    ```mlir
    %d = grove.scatter_add %zeros, %idx, %vals
        : (tensor<1000xf32>, tensor<?x32xi32>, tensor<?x32xf32>) -> tensor<1000xf32>
    ```
  }];
  let arguments = (ins TensorRankOf<[F32, F64], [1]>:$base,
                       TensorOf<[I32]>:$indices,
                       TensorOf<[F32, F64]>:$values);
  let results = (outs TensorRankOf<[F32, F64], [1]>:$result);
  let assemblyFormat = [{
    $base `,` $indices `,` $values attr-dict `:` `(` type($base) `,`
    type($indices) `,` type($values) `)` `->` type($result)
  }];
  let hasVerifier = 1;
}

def Grove_TopKOp : Grove_Op<"top_k", [Pure, Grove_NotDifferentiable]> {
  let summary = "the k elements of largest magnitude, with their indices";
  let description = [{
    Of a rank-1 tensor, the `k` elements of largest absolute value (ties
    to the lower index; NaN counts as largest) and their indices, in
    increasing index order. The top-k compressor sends them. Bufferizes to
    one runtime call (`grove_rt_top_k_<type>`).

    ```mlir
    %v, %i = grove.top_k %e {k = 32} : tensor<1000xf32> -> (tensor<32xf32>, tensor<32xi32>)
    ```
  }];
  let arguments = (ins TensorRankOf<[F32, F64], [1]>:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$k);
  let results = (outs TensorRankOf<[F32, F64], [1]>:$values,
                      TensorRankOf<[I32], [1]>:$indices);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` `(` type($values) `,` type($indices) `)`
  }];
  let hasVerifier = 1;
}

def Grove_RandomUniformOp : Grove_Op<"random_uniform",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "a pseudo-random tensor in [-1, 1), the same on every rank";
  let description = [{
    Element i (row-major) is `2 u - 1` with `u` the top 53 bits of
    `splitmix64(seed ^ (stream << 32) ^ i)` over 2^53: a fixed tensor
    every rank computes alike, such as PowerSGD's first Q.

    ```mlir
    %q = grove.random_uniform {seed = 0, stream = 3} : tensor<64x2xf32>
    ```
  }];
  let arguments = (ins I64Attr:$seed, I64Attr:$stream);
  let results = (outs Grove_FloatTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Grove_RandomIndicesOp : Grove_Op<"random_indices",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "`count` distinct pseudo-random indices, the same on every rank";
  let description = [{
    `result[j] = (o + j s) mod extent` for j < `count`: an arithmetic
    progression modulo `extent` from a start `o` drawn from the counter as
    grove.random_block draws (`splitmix64(seed ^ (stream << 32) ^ counter)
    mod extent`), with the stride `s` the integer nearest 0.618 extent that
    is coprime to it (so the indices are distinct and spread). The random-k
    compressor sends the elements at them; every rank draws the same.

    ```mlir
    %i = grove.random_indices %step {seed = 0, stream = 0, extent = 1000,
                                     count = 31} : (tensor<i64>) -> tensor<31xi32>
    ```
  }];
  let arguments = (ins TensorRankOf<[I64], [0]>:$counter, I64Attr:$seed,
                       I64Attr:$stream, I64Attr:$extent);
  let results = (outs TensorRankOf<[I32], [1]>:$result);
  let assemblyFormat = "$counter attr-dict `:` functional-type($counter, $result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The stride: nearest 0.618 extent, coprime to it.
    int64_t getStride();
  }];
}

def Grove_RandomBlockOp : Grove_Op<"random_block",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "a pseudo-random block offset, the same on every rank";
  let description = [{
    The offset of a block of `block` elements in a flat tensor of `extent`
    elements, drawn from a counter (a rank-0 i64, usually a step count) so
    that every rank that shares the counter draws the same block: the
    GRBS compressor's shared seed (CSER; docs/distributed.md). With
    `n = ceil(extent / block)` blocks, `h = splitmix64(seed ^ (stream <<
    32) ^ counter)` picks block `h mod n`, whose offset `(h mod n) * block`
    is clamped to `extent - block` (the last block ends at the end).

    ```mlir
    %off = grove.random_block %step {seed = 7, stream = 0, extent = 8192,
                                     block = 256} : tensor<i64>
    ```
  }];
  let arguments = (ins TensorRankOf<[I64], [0]>:$counter, I64Attr:$seed,
                       I64Attr:$stream, I64Attr:$extent, I64Attr:$block);
  let results = (outs Index:$result);
  let assemblyFormat = "$counter attr-dict `:` type($counter)";
  let hasVerifier = 1;
}

#endif // GROVE_DIALECT_GROVE_IR_GROVETENSOROPS_TD
