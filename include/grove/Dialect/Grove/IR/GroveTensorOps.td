//===- GroveTensorOps.td - Constants and data-movement ops -----------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVETENSOROPS_TD
#define GROVE_DIALECT_GROVE_IR_GROVETENSOROPS_TD

include "grove/Dialect/Grove/IR/GroveBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
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

def Grove_ReshapeOp : Grove_DiffOp<"reshape", [Pure, Grove_RowWiseByRule]> {
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
    [Pure, Grove_RowWiseByRule]> {
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

def Grove_ConcatOp : Grove_DiffOp<"concat", [Pure, Grove_RowWiseByRule]> {
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

def Grove_SliceOp : Grove_DiffOp<"slice", [Pure, Grove_RowWiseByRule]> {
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
    [Pure, Grove_RowWiseByRule]> {
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
    [Pure, SameOperandsAndResultType, Grove_RowWiseByRule]> {
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

#endif // GROVE_DIALECT_GROVE_IR_GROVETENSOROPS_TD
