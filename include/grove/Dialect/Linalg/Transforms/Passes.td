//===- Passes.td - Grove's transforms of linalg on tensors ----------------===//
//
// Linalg to linalg, on tensors, after convert-grove-to-linalg: fusion, loop
// shapes and reduction splitting with Grove's controls over upstream's
// patterns. They are not conversions (the input and output are both
// linalg), so they live here rather than in include/grove/Conversion.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_LINALG_TRANSFORMS_PASSES_TD
#define GROVE_DIALECT_LINALG_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def GroveFuseElementwise : Pass<"grove-fuse-elementwise"> {
  let summary = "elementwise fusion into linalg.generic consumers only";
  let description = [{
    Upstream's elementwise fusion patterns (as `linalg-fuse-elementwise-ops`)
    with a control that fuses a producer only into a `linalg.generic`: named
    contractions (matmul, batch_matmul - the GEMMs of 1x1 and im2col
    convolutions) stay named, so `convert-linalg-to-blas` still turns them
    into BLAS / cuBLAS calls instead of loops.

    Every `grove.assign` (a sink of its value) first moves to the end of its
    block. The control recomputes nothing: the producer has one use, and
    the consumer reads each of its elements once (its indexing map for it
    is a permutation; a producer the consumer broadcasts, such as a
    per-channel BN before a small FC written as a reduction generic, would
    run once per broadcast point). A producer whose other users all follow
    the consumer fuses too, the fused op keeping its result for them
    (FuseIntoLaterUsers: an optimizer's new moments fuse into the
    parameter's update and still reach their state writes). Reshapes fold
    into generics by expansion, as upstream.

    One exception recomputes: a reduction to a scalar (a `linalg.reduce`
    to rank 0 is generalised first) reading an all-parallel elementwise op
    that others read too gets a copy of that op of its own, which fusion
    folds into it (RecomputeIntoFullReduction), when every other user is a
    generic or a state write: LAMB's norm of its update direction reads
    p, g, m and v instead of a stored direction (docs/training.md, "Bytes
    per parameter").
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def GroveCollapseLoopDims : Pass<"grove-collapse-loop-dims"> {
  let summary = "merges adjacent loops of linalg.generics that walk memory "
                "contiguously";
  let description = [{
    Upstream's `linalg::populateCollapseDimensions` with a control that
    merges every run of adjacent loops of the same iterator type whose
    dimensions stay adjacent and in order in every operand (or are absent
    from it: a broadcast). An elementwise op on N x C x 7 x 7 then has one
    loop of C·49 or N·C·49 iterations instead of an innermost loop of 7: the
    host vectorizer gets long loops, GPU threads fewer index computations.
    A broadcast operand of static size 1 read at constant 0 (a C x 1 x 1
    per-channel operand, as NumPy broadcasting spells it) is first
    collapsed to the dimensions it is read along, so it no longer keeps
    H and W apart. Only ops whose indexing maps are then all projected
    permutations are considered (no windows, no indexed rows); ops reading a
    `tensor.extract_slice` are left alone, since a slice may not be
    collapsible as a buffer and bufferization would copy it.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def GroveSplitFullReductions : Pass<"grove-split-full-reductions"> {
  let summary = "splits long reductions to a scalar into parallel partial "
                "sums";
  let description = [{
    A reduction of a whole tensor to a scalar (a norm, a loss's sum) has no
    parallel loop, so the host's thread team would run it on one thread.
    Upstream's `linalg::splitReduction` rewrites a reduction over N static
    elements into `parts` partial reductions of N/parts contiguous elements
    each (a parallel loop the threads share, vectorised inside) and a short
    final reduction of the partials. `parts` is the largest power of two up
    to `max-parts` that divides N and leaves each part `min-part` elements
    or more; reductions of fewer than `min-size` elements, of dynamic size,
    over more than one loop, reading `linalg.index` or through a map that
    is not a projected permutation (a broadcast's constant index) stay as
    they are. The sum's association changes (reductions are already
    reassociated when vectorised).
  }];
  let options = [
    Option<"maxParts", "max-parts", "int64_t", /*default=*/"64",
           "The most partial reductions">,
    Option<"minPart", "min-part", "int64_t", /*default=*/"4096",
           "The fewest elements a partial reduction takes">,
    Option<"minSize", "min-size", "int64_t", /*default=*/"32768",
           "Reductions of fewer elements stay on one thread">,
  ];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
}

def GroveFuseSiblingReductions : Pass<"grove-fuse-sibling-reductions"> {
  let summary = "merges independent reductions over one iteration space "
                "that read a tensor in common";
  let description = [{
    Upstream fuses a producer into its consumer; reductions that read the
    same data (LAMB's norms of a parameter and of its update direction,
    LANS's of the parameter and of its two directions) stay separate loops,
    each a pass over memory and on the host a parallel region of its own.
    Two `linalg.generic`s on tensors in one block with the same static loop
    ranges and iterator types (at least one a reduction), neither reading
    the other's results, that read one tensor through one indexing map
    become one generic yielding both results; an input both read through
    one map is one operand, and a merged op takes further siblings. The
    merge stands where the later op stood: ops between the two that read
    the earlier one's results move after it, in order, when they have no
    memory effects; where one has, or another op between them may write
    memory, the two stay apart. Ops that read `linalg.index`, carry
    attributes of their own or have dynamic loops are left alone. It runs
    after grove-split-full-reductions, whose partial sums it merges
    (upstream splits single-result reductions only).

    First, structured ops on tensors with a reduction loop that equal an
    earlier one of their block (the same operands, attributes and body;
    inits that are fills of one value into fresh `bufferization.alloc_tensor`s
    of one type and size, each read only by its op) are replaced by that
    one's results, and their fills and allocations erased: a batch norm's
    gradient sums dy and dy·x̂ once for its input's gradient and again for
    its scale's and bias's. CSE keeps them apart, since the allocations are
    distinct on purpose (each GEMM or reduction starts from a buffer of
    its own).
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

#endif // GROVE_DIALECT_LINALG_TRANSFORMS_PASSES_TD
