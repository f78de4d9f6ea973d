//===- Passes.td - Grove code-generation passes ----------------------------===//
//
// Target code generation after bufferization that is not a conversion
// between dialects' levels: shared memref steps (Common), the host's loops
// and float legalization (LLVMCPU), GPU kernels and device buffers
// (LLVMGPU), in lib/Codegen/<area> (IREE's Codegen layout).
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_CODEGEN_PASSES_TD
#define GROVE_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def GroveStageDeviceConstants
    : Pass<"grove-stage-device-constants", "func::FuncOp"> {
  let summary = "copies constant globals into fresh buffers before use";
  let description = [{
    Device targets, before buffer deallocation: kernels cannot read a host
    `memref.global`, so every `memref.get_global` becomes a `memref.alloc`
    plus a `memref.copy` from the global. Deallocation then frees (or
    returns) the copy like any other buffer, and `grove-memref-to-gpu` turns
    the pair into a device allocation and a host-to-device copy.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def ConvertLinalgToGPULaunch
    : Pass<"convert-linalg-to-gpu-launch", "func::FuncOp"> {
  let summary = "turns each memref linalg op into one gpu.launch";
  let description = [{
    Every structured op on buffers (elementwise generics, fills, copies,
    reductions; matmuls are expected to be library calls already) becomes a
    kernel: it is generalized, its parallel loops are moved outermost, and
    the parallel iteration space - dynamic sizes included - is linearized
    onto a 1-D grid of `block-size` threads: one thread per output element
    (`affine.delinearize_index` of the global id), consecutive threads on
    consecutive innermost indices (coalesced). Reductions are an `scf.for`
    nest inside the thread whose `iter_args` carry the outputs (loaded once,
    stored once). A `linalg.fill` of a fresh buffer that such a kernel
    then writes whole, with no other use of the buffer in between, is folded
    into it: the accumulators start from the fill's value and the fill's own
    kernel goes. Ops with no parallel loop run on a single thread. An
    output indexed by a reduction loop, or also read as an input, takes the
    general path (`scf.parallel` from linalg, linearized the same way, the
    output read and written in memory). Upstream
    `convert-parallel-loops-to-gpu` needs static thread-level bounds, which
    Grove's dynamic batch sizes do not have.

    With `warp-reductions` (the default), a reduction whose every output
    folds its terms in with one add, max or min, along the innermost index
    of an input (consecutive lanes read consecutive elements) and longer
    than 128 points (or dynamic), takes a warp of 32 lanes per output point
    instead: a softmax row, a global pool over H*W, an FC over channels.
    The lanes stride the linearized reduction space from the combiner's
    identity, a butterfly of `gpu.shuffle xor` combines them, and lane 0
    folds in the start value (the folded fill's, else the stored output)
    and stores. A full reduction gets one warp instead of one thread.

    With `narrow-indices`, the delinearizations divide in 32 bits wherever
    the space they split has at most 2^31 - 1 points: decided at compile
    time for static extents, else by an `scf.if` on the extent that is
    uniform across the grid (the 64-bit `affine.delinearize_index` is the
    other branch). A 64-bit division by a constant is a 64x64-bit
    multiply-high that the GPU emulates with several 32-bit ones; the
    profile of ResNeSt-50 suggested those bound the index-heavy kernels.
    Off until measured on a GPU (bench/gpu, docs/gpu-results.md).
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per block">,
    Option<"narrowIndices", "narrow-indices", "bool", /*default=*/"false",
           "32-bit delinearization where the split space fits in 32 bits">,
    Option<"warpReductions", "warp-reductions", "bool", /*default=*/"true",
           "a warp per output point for long reductions along the inputs' "
           "innermost index">
  ];
  let dependentDialects = ["affine::AffineDialect", "arith::ArithDialect",
                           "gpu::GPUDialect", "scf::SCFDialect"];
}

def GroveLowerSubgroupReduce : Pass<"grove-lower-subgroup-reduce"> {
  let summary = "gpu.subgroup_reduce to a butterfly of 32-bit gpu.shuffle";
  let description = [{
    Device targets, right after convert-linalg-to-gpu-launch: upstream's
    shuffle lowering for a warp of 32 lanes, five `gpu.shuffle xor` steps
    per reduction. It runs before deallocation, which refuses ops of
    unknown memory effects such as `gpu.subgroup_reduce`, and because
    convert-gpu-to-nvvm only lowers integer subgroup reductions. A value
    narrower than 32 bits (a bf16 max) travels packed in an i32, which is
    exact; an f64 as two 32-bit halves. A wider one is an error.
  }];
  let dependentDialects = ["gpu::GPUDialect", "arith::ArithDialect",
                           "vector::VectorDialect"];
}

def GroveMemRefToGPU : Pass<"grove-memref-to-gpu", "ModuleOp"> {
  let summary = "puts heap buffers on the device, host-read ones excepted";
  let description = [{
    Device targets, after deallocation: `memref.alloc` / `memref.dealloc`
    become `gpu.alloc` / `gpu.dealloc`, and contiguous `memref.copy` becomes
    `gpu.memcpy` (device to device, or host to device from a staged
    constant). Stack buffers (`memref.alloca`, used by deallocation
    bookkeeping on the host) stay. Fails on a non-contiguous copy, which
    `grove-legalize-memref` should have made a `linalg.copy` kernel.

    Runtime services with a device twin are redirected to it: the
    collectives `grove_rt_{all_reduce,all_gather,broadcast}_<type>` become
    `grove_rt_cuda_...` (NCCL, device buffers), and
    `grove_rt_tree_schedule` becomes `grove_rt_cuda_tree_schedule`, whose
    group table the group loop of `grove-batch-dynamic-trees` reads on the
    host, so that buffer stays there. `grove_rt_top_k_<type>` (a host
    selection) is refused. Buffers only host code reads and writes
    (deallocation's ownership flags, and the private host helpers they are
    passed to) stay on the host too. A host store into any other buffer (a
    scalar computed on the host) becomes a one-thread kernel; a host load
    from one (a device buffer, or a function argument, which is device
    memory) outside loops becomes a call of `grove_rt_cuda_read_<type>`,
    which waits for the stream and copies the element; inside a host loop
    it is an error, never a read of a device address.
  }];
  let dependentDialects = ["gpu::GPUDialect", "func::FuncDialect",
                           "arith::ArithDialect"];
}

def GroveShortenBufferLifetimes : Pass<"grove-shorten-buffer-lifetimes"> {
  let summary = "frees each buffer right after its last use in its block";
  let description = [{
    After the buffer deallocation pipeline, which frees a block's buffers at
    the end of the block: a `memref.dealloc` of a `memref.alloc` of the same
    block moves to right after the last operation of the block that uses
    the buffer or any memref derived from it (a view, or any memref result
    of an operation using it, conservatively). Nothing moves when a use lies
    in another block, reaches a terminator (the buffer escapes), or another
    dealloc frees an alias. A network is one function, so without this every
    activation lived until the forward pass ended.
  }];
}

def GroveGuardStateWrites : Pass<"grove-guard-state-writes", "ModuleOp"> {
  let summary = "runs a call's state writes only if the call has not failed";
  let description = [{
    After bufferization, on every target. Some failures are reported from
    inside the generated code, which then goes on: a size check
    (`grove.agree_dims`), a service that records an error (a GEMM on bad
    shapes, a malformed forest, a CUDA service). The runtime fails such a
    call after it returns, so its state writes, which come last, must not
    run: every top-level operation of a function that may write one of its
    `grove.writes` state buffers (a declared write to the buffer, a view of
    it or a region argument it starts, or a nested op without declared
    effects given one) is wrapped in an
    `scf.if` on `grove_rt_call_failed() == 0`, asked once, just before the
    first of them. It is an error for a write to be a service call
    (skipping it on one rank could leave the ranks apart), for a check or
    a call to sit between the first and the last write (the query would
    miss its failure), for a write's results to be used, and for a
    function of more than one block to write state.
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "scf::SCFDialect"];
}

def GroveLegalizeMemRef : Pass<"grove-legalize-memref"> {
  let summary = "rewrites memref ops the upstream LLVM lowering cannot take";
  let description = [{
    * A `memref.copy` involving a non-identity layout would lower to a call
      of `memrefCopy` from MLIR's C runner utilities; as `linalg.copy` it
      becomes loops with no library dependency. Contiguous copies stay (they
      become `memcpy`).
    * A `memref.expand_shape` with several dynamic sizes in one
      reassociation group crashes MLIR 22's expand-strided-metadata
      (llvm-project#186830); it becomes a `memref.reinterpret_cast` with
      strides computed from its `output_shape`.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "memref::MemRefDialect"];
}

def GroveParallelLoopsFirst
    : Pass<"grove-parallel-loops-first", "func::FuncOp"> {
  let summary = "moves a reduction's parallel loops outermost (host)";
  let description = [{
    Host target, before `convert-linalg-to-parallel-loops`: a linalg
    reduction (a generic or `linalg.reduce` on memrefs) whose loops put a
    reduction before a parallel one - batch norm's per-channel statistics
    over N x C x H x W reduce N, H and W around C - is interchanged so that
    its parallel loops come first, each in its order, then its reduction
    loops in theirs. The loop nest then starts with an `scf.parallel` that
    `grove-outline-parallel-loops` hands to the thread team; before, it
    started with the reduction's `scf.for` and ran on one thread. Then
    adjacent reduction loops that every operand walks contiguously (H and
    W) merge into one (upstream `collapseOpIterationDims`; not for strided
    views), a loop long enough to vectorise, which reassociates the sum as
    every vectorised reduction does. Only where the innermost loop is a
    reduction: with a parallel loop innermost (a sum over the rows of
    N x C, C contiguous) the interchange would make the contiguous walk
    strided.
  }];
  let dependentDialects = ["linalg::LinalgDialect"];
}

def GroveWidenLoopAccumulators
    : Pass<"grove-widen-loop-accumulators", "func::FuncOp"> {
  let summary = "carries f16/bf16 loop accumulators in f32 (host)";
  let description = [{
    Host target, after `arith-emulate-unsupported-floats` has moved f16/bf16
    arithmetic to f32 with a rounding after every op: an `scf.for` iter_arg
    of f16/bf16 that the body only reads widened to f32 (`arith.extf`) and
    yields narrowed from f32 (`arith.truncf`) - a reduction's running sum -
    becomes an f32 iter_arg. Its initial value is widened before the loop
    and the result narrowed once after it, so a matmul or convolution
    accumulates in f32 and rounds once, as cuBLAS and PyTorch do (a long
    bf16 dot product summed in bf16 drifts by percents; docs/passes.md).
    Loops are
    visited inner first, so a nest of reduction loops carries f32 through.
  }];
  let dependentDialects = ["arith::ArithDialect", "scf::SCFDialect"];
}

def GroveExpandBF16Casts : Pass<"grove-expand-bf16-casts"> {
  let summary = "expands bf16 extf/truncf into integer operations (host)";
  let description = [{
    Host target, after `arith-emulate-unsupported-floats{source-types=bf16}`
    has moved bf16 arithmetic to f32: `arith.extf` / `arith.truncf` between
    bf16 and f32 become bit shifts with round-to-nearest-even, so the object
    needs no compiler-runtime helper (GCC 12's libgcc lacks
    `__truncsfbf2`). Unlike upstream `arith-expand{include-bf16}` it leaves
    every other op alone.
  }];
  let dependentDialects = ["arith::ArithDialect"];
}

def GroveApproximateMath : Pass<"grove-approximate-math"> {
  let summary = "f32 tanh and erf as upstream's polynomial approximations (host)";
  let description = [{
    Host target: `math.tanh` and `math.erf` on f32 (scalars or vectors)
    become MLIR's rational approximations
    (`populatePolynomialApproximateTanhPattern`, `...ErfPattern`), plain
    arithmetic that LLVM's vectorizer widens. LLVM has no vector mapping of
    `tanhf` or `erff` to libmvec, so the libm calls they would otherwise be
    stay scalar, one call an element: a Tree-LSTM spent a quarter of its
    forward in tanh, a BERT train step 6% in erf (GELU; docs/perf.md).
    Other element types keep their calls.
  }];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect",
                           "vector::VectorDialect"];
}

def GroveHostLoopHints : Pass<"grove-host-loop-hints"> {
  let summary = "registers for accumulators; vectorize, not unroll, inner loops";
  let description = [{
    Host target, after linalg has become loops. LLVM fully unrolls a loop
    with a small constant trip count (an image row of 56, say) before its
    loop vectorizer runs, leaving scalar straight-line code; it cannot
    vectorize a memref loop at all when it cannot bound the addresses for
    run-time alias checks, which is most of them; and it keeps a reduction's
    accumulator in memory, since the loop's other loads might alias it.
    Linalg knows better, so:

    * a reduction loop `scf.for { x = load M[I]; ...; store y, M[I] }` with
      M and I defined outside, no other access to M and no other write in
      the loop, carries the accumulator as an `iter_args` value instead
      (load before, store after), innermost loops first so the enclosing
      loops follow; a load from another view of M's buffer blocks it;
    * an innermost `scf.parallel` without results becomes nested `scf.for`
      loops; if its innermost trip count is unknown or at least
      `min-trip-count`, the innermost loop is annotated with
      `unroll = <disable = true>`, plus, when every store indexes with its
      innermost induction variable (iterations write disjoint elements;
      bufferization keeps linalg inputs and outputs apart except element
      for element), a fresh access group in `parallelAccesses`: no
      iteration depends on another, so the vectorizer needs no alias checks;
    * any other innermost `scf.for` whose trip count is unknown or at least
      `min-trip-count` gets `unroll = <disable = true>`, and when it
      carries a float sum marked `reassoc` (a promoted linalg reduction's)
      and its trip count is unknown or at least 128, also
      `interleave = <count = 4>`: LLVM then keeps four vector partial
      sums. On its own it keeps one in a nested loop, and the sum runs at
      one vector add per add latency (measured on ResNeSt's split
      attention: docs/perf.md, "Split attention").

    The annotation is the discardable `llvm.loop_annotation` that scf-to-cf
    moves onto the loop's back edge; `grove-host-loop-metadata` completes
    it in the LLVM dialect.
  }];
  let options = [
    Option<"minTripCount", "min-trip-count", "int64_t", /*default=*/"16",
           "smallest constant trip count to annotate">
  ];
  let dependentDialects = ["LLVM::LLVMDialect", "scf::SCFDialect"];
}

def GroveHostLoopMetadata : Pass<"grove-host-loop-metadata", "ModuleOp"> {
  let summary = "turns loop hints into LLVM loop metadata";
  let description = [{
    LLVM dialect, after the host lowering. A branch carrying the
    discardable `llvm.loop_annotation` that `grove-host-loop-hints` put on
    a loop (and scf-to-cf moved to its back edge) gets it as its
    `loop_annotation` property, which becomes `!llvm.loop` metadata; when
    the annotation lists parallel access groups, every `llvm.load` and
    `llvm.store` in that loop joins them (`llvm.access.group`), which is
    what LLVM reads `llvm.loop.parallel_accesses` against.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

def GroveOutlineParallelLoops
    : Pass<"grove-outline-parallel-loops", "ModuleOp"> {
  let summary = "outlines outermost scf.parallel loops into range functions";
  let description = [{
    Host target, first half of multithreading the generated code. Each
    outermost `scf.parallel` without results whose work (the product of
    constant trip counts, its own and nested loops') is unknown or at least
    `min-work` becomes a private function

        func.func private @<f>__parallel_<n>(%lo: index, %hi: index,
                                             captures...)
            attributes {grove.parallel_body = <work> : i64}

    that runs iterations [lo, hi) of the loop's outer dimensions, linearized
    (all but the innermost dimension, which stays a loop of its own for the
    vectorizer; all dimensions when the body loops again, as a reduction
    does, or when the outer ones are known to have fewer than 8
    iterations), fewer while one linear iteration would be less work
    than `min-iteration-work`: static inner dimensions then join the body
    as nested loops, innermost first, as long as the range keeps at least
    8 (or an unknown number of) iterations, so that an im2col's short
    rows or a pool's small windows do not pay a division per dimension
    every few elements. `<work>` is the constant work of one linear
    iteration, 0 when unknown. The loop is replaced by a call over the whole range,
    so the IR stays correct and sequential until
    `grove-dispatch-parallel-calls` hands the range to the runtime's thread
    team. Constants and views (subviews, reshapes, casts) are rebuilt in the
    body rather than captured, so views of one buffer stay recognizably one
    buffer there. Empty nested loops do not count as zero work.

    The function records which of its memref captures no other capture may
    overlap unless neither is written in it (`grove.noalias_args`, with its
    memref-level signature in `grove.memref_signature`), for
    `grove-dispatch-parallel-calls` to mark their pointers `noalias`:
    without that LLVM reloads an accumulator after every load of the input
    it reduces and guards vector loops with overlap checks. Buffers are
    distinct when they come, through views, from different allocations or
    globals, or from different state arguments of an entry function; an
    entry's inputs may overlap each other and its state, and the arguments
    of other functions anything. A body that calls out, frees, writes a
    buffer it cannot trace to a capture or its own allocation, or captures
    an unranked memref or a pointer records nothing.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"32768",
           "smallest constant iteration count worth a parallel region">,
    Option<"minIterationWork", "min-iteration-work", "int64_t",
           /*default=*/"256",
           "static inner dimensions join the body as nested loops while "
           "one linear iteration is less work than this (0: never)">
  ];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "scf::SCFDialect"];
}

def GroveDispatchParallelCalls
    : Pass<"grove-dispatch-parallel-calls", "ModuleOp"> {
  let summary = "sends calls of grove.parallel_body functions to the runtime";
  let description = [{
    Host target, LLVM dialect, second half of multithreading: every call of
    a function marked `grove.parallel_body` (by
    `grove-outline-parallel-loops`), `body(lo, hi, captures...)`, becomes

        grove_rt_parallel_for(@body__thunk, &ctx, lo, hi, work_per_iteration)

    where `ctx` is a stack struct holding the captures and the generated
    thunk `void(ptr ctx, i64 lo, i64 hi)` unpacks them and calls the body.
    The runtime splits [lo, hi) over the OpenMP team that also runs
    oneDNN's GEMMs (one team, so the two never spin against each other on
    the same cores) and runs small ranges inline. The aligned pointers of
    the memrefs the body's `grove.noalias_args` names become `noalias`
    (the LLVM lowering drops the argument attributes of memrefs; the
    recorded `grove.memref_signature` says where each memref's
    descriptor lies among the body's arguments).
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

#endif // GROVE_CODEGEN_PASSES_TD
