//===- GroveCollectiveOps.td - Collectives across data-parallel ranks ------===//
//
// Every rank of a data-parallel job runs the same compiled code, so the
// collectives meet in program order. They read and write the world (other
// processes' memory), so they carry memory effects: nothing reorders, merges
// or deletes them. Each bufferizes to one runtime service call on the
// context's communicator (abi.h; docs/distributed.md).
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_IR_GROVECOLLECTIVEOPS_TD
#define GROVE_DIALECT_GROVE_IR_GROVECOLLECTIVEOPS_TD

include "grove/Dialect/Grove/IR/GroveBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// What the collectives move: the float types and i32 (top-k's indices).
def Grove_CommTensor : RankedTensorOf<[F32, F16, BF16, F64, I32]>;

def Grove_ReductionKind : I32EnumAttr<"ReductionKind",
    "how an all-reduce combines the ranks' values", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Mean", 1, "mean">]> {
  let cppNamespace = "::mlir::grove";
}

class Grove_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Grove_Op<mnemonic, !listconcat(traits,
          [MemoryEffects<[MemRead, MemWrite]>, Grove_NotDifferentiable])>;

// Elementwise across ranks, so row-wise in a tree cell as far as rows go
// (RowWiseOpInterface's default).
def Grove_AllReduceOp : Grove_CollectiveOp<"all_reduce",
    [SameOperandsAndResultType, Grove_RowWiseOpInterface]> {
  let summary = "the sum or mean of a tensor over every rank";
  let description = [{
    Every rank gets the elementwise sum (`sum`) or mean (`mean`, the sum
    divided by the world size) of the ranks' `input`s, which must have one
    shape on every rank. f16 and bf16 are summed in f32 and rounded once per
    partial sum; a mean of i32 truncates.

    ```mlir
    %g = grove.all_reduce mean %grad : tensor<128x64xf32>
    ```
  }];
  let arguments = (ins Grove_CommTensor:$input, Grove_ReductionKind:$kind);
  let results = (outs Grove_CommTensor:$result);
  let assemblyFormat = "$kind $input attr-dict `:` type($result)";
}

def Grove_CollectiveRequest : TypeDef<Grove_Dialect, "CollectiveRequest"> {
  let mnemonic = "collective_request";
  let summary = "a collective in flight";
  let description = [{
    What grove.all_reduce_start and grove.all_gather_start return and
    grove.collective_wait takes: the handle of a collective that moves
    while the code between them runs. It lowers to the runtime's i64
    handle (abi.h).
  }];
}

// A collective split in two by grove-overlap-collectives: the start takes
// a copy of `input` and returns at once; the ops between it and its
// grove.collective_wait (exactly one, in its block) run while the ranks
// exchange. The input's shape is static (a bucket's).
class Grove_CollectiveStartOp<string mnemonic>
    : Grove_CollectiveOp<mnemonic> {
  let results = (outs Grove_CollectiveRequest:$request);
  let hasVerifier = 1;
}

def Grove_AllReduceStartOp : Grove_CollectiveStartOp<"all_reduce_start"> {
  let summary = "starts a grove.all_reduce; grove.collective_wait ends it";
  let description = [{
    ```mlir
    %r = grove.all_reduce_start mean %grad : tensor<4096xf32>
    // ... the backward of the layers below ...
    %g = grove.collective_wait %r : tensor<4096xf32>
    ```
  }];
  let arguments = (ins Grove_CommTensor:$input, Grove_ReductionKind:$kind);
  let assemblyFormat = "$kind $input attr-dict `:` type($input)";
}

def Grove_AllGatherStartOp : Grove_CollectiveStartOp<"all_gather_start"> {
  let summary = "starts a grove.all_gather; grove.collective_wait ends it";
  let description = [{
    ```mlir
    %r = grove.all_gather_start %values : tensor<64xf32>
    %all = grove.collective_wait %r : tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Grove_CommTensor:$input);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Grove_CollectiveWaitOp : Grove_CollectiveOp<"collective_wait"> {
  let summary = "waits for a started collective and returns its result";
  let description = [{
    The result is the collective's: the start's input type for an
    all-reduce, every rank's input stacked (a leading world-size
    dimension, dynamic or the compiled world's) for an all-gather.
  }];
  let arguments = (ins Grove_CollectiveRequest:$request);
  let results = (outs Grove_CommTensor:$result);
  let assemblyFormat = "$request attr-dict `:` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The op that started the collective, or null.
    Operation *getStart() {
      Operation *def = getRequest().getDefiningOp();
      return isa_and_nonnull<AllReduceStartOp, AllGatherStartOp>(def) ? def
                                                                      : nullptr;
    }
  }];
}

def Grove_AllGatherOp : Grove_CollectiveOp<"all_gather"> {
  let summary = "every rank's tensor, stacked in rank order";
  let description = [{
    `result[r]` is rank r's `input` on every rank: the result has a leading
    dimension of the world size (dynamic, or the size the module was
    compiled for) and then the input's shape, which must be one on every
    rank. Top-k compressors gather their indices and values with it.

    ```mlir
    %all = grove.all_gather %values : (tensor<64xf32>) -> tensor<?x64xf32>
    ```
  }];
  let arguments = (ins Grove_CommTensor:$input);
  let results = (outs Grove_CommTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type($input, $result)";
  let hasVerifier = 1;
}

def Grove_BroadcastOp : Grove_CollectiveOp<"broadcast",
    [SameOperandsAndResultType, Grove_RowWiseOpInterface]> {
  let summary = "rank `root`'s tensor, on every rank";
  let description = [{
    ```mlir
    %w = grove.broadcast %w0 {root = 0} : tensor<128x64xf32>
    ```
    A root that is not a rank fails the call.
  }];
  let arguments = (ins Grove_CommTensor:$input,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$root);
  let results = (outs Grove_CommTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Grove_WorldSizeOp : Grove_Op<"world_size",
    [MemoryEffects<[MemRead]>, Grove_NotDifferentiable]> {
  let summary = "the number of ranks of the call's communicator";
  let description = [{
    1 when the context has no communicator. Reads the context, so it is not
    folded or hoisted out of the function.

    ```mlir
    %n = grove.world_size : index
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Grove_WorldRankOp : Grove_Op<"world_rank",
    [MemoryEffects<[MemRead]>, Grove_NotDifferentiable]> {
  let summary = "this process's rank in the call's communicator";
  let description = [{
    ```mlir
    %r = grove.world_rank : index
    ```
  }];
  let results = (outs Index:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Compressor primitives
//===----------------------------------------------------------------------===//

def Grove_PackSignsOp : Grove_Op<"pack_signs", [Pure, Grove_NotDifferentiable]> {
  let summary = "the sign bits of a flat tensor, 32 a word";
  let description = [{
    Bit b of word w is 1 where element 32 w + b is negative (the sign
    compressor's message: one bit an element; the words past the end pad
    with 0).

    ```mlir
    %w = grove.pack_signs %e : tensor<1000xf32> -> tensor<32xi32>
    ```
  }];
  let arguments = (ins TensorRankOf<[F32, F64], [1]>:$input);
  let results = (outs TensorRankOf<[I32], [1]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Grove_MeanOfSignsOp : Grove_Op<"mean_of_signs",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "the mean over ranks of scaled sign vectors";
  let description = [{
    `result[i] = mean_r scales[r] * (bit i of words[r] ? -1 : 1)`: the
    average of every rank's `scale * sign(e)` from their packed signs
    (grove.pack_signs) and scales, gathered.

    ```mlir
    %m = grove.mean_of_signs %words, %scales
        : (tensor<?x32xi32>, tensor<?xf32>) -> tensor<1000xf32>
    ```
  }];
  let arguments = (ins TensorRankOf<[I32], [2]>:$words,
                       TensorRankOf<[F32, F64], [1]>:$scales);
  let results = (outs TensorRankOf<[F32, F64], [1]>:$result);
  let assemblyFormat = [{
    $words `,` $scales attr-dict `:` `(` type($words) `,` type($scales) `)`
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Grove_PackInt8Op : Grove_Op<"pack_int8", [Pure, Grove_NotDifferentiable]> {
  let summary = "8-bit codes of a flat tensor under one scale, 4 a word";
  let description = [{
    Element i's code is `clamp(floor(input[i] / scale + 1/2), -127, 127)`
    (0 where the scale is 0 or the quotient is NaN), a two's-complement byte
    at bits 8 (i mod 4) to 8 (i mod 4) + 7 of word i / 4; the words past
    the end pad with 0. `scale` holds one value: the int8 compressor's is
    max |input| / 127, so the largest magnitude is 127.

    ```mlir
    %w = grove.pack_int8 %e, %s
        : (tensor<1000xf32>, tensor<1xf32>) -> tensor<250xi32>
    ```
  }];
  let arguments = (ins TensorRankOf<[F32, F64], [1]>:$input,
                       TensorRankOf<[F32, F64], [1]>:$scale);
  let results = (outs TensorRankOf<[I32], [1]>:$result);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` `(` type($input) `,` type($scale) `)`
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def Grove_MeanOfInt8Op : Grove_Op<"mean_of_int8",
    [Pure, Grove_NotDifferentiable]> {
  let summary = "the mean over ranks of scaled 8-bit codes";
  let description = [{
    `result[i] = sum_r scales[r] * code_r(i) / R` over the R rows of
    `words`, `code_r(i)` being byte i mod 4 of `words[r][i / 4]` read as a
    signed number: the average of every rank's decoded message
    (grove.pack_int8), gathered with its scale.

    ```mlir
    %m = grove.mean_of_int8 %words, %scales
        : (tensor<?x250xi32>, tensor<?xf32>) -> tensor<1000xf32>
    ```
  }];
  let arguments = (ins TensorRankOf<[I32], [2]>:$words,
                       TensorRankOf<[F32, F64], [1]>:$scales);
  let results = (outs TensorRankOf<[F32, F64], [1]>:$result);
  let assemblyFormat = [{
    $words `,` $scales attr-dict `:` `(` type($words) `,` type($scales) `)`
    `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // GROVE_DIALECT_GROVE_IR_GROVECOLLECTIVEOPS_TD
