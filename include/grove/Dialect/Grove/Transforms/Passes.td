//===- Passes.td - Grove dialect transformation passes ---------------------===//
//
// Passes that rewrite grove IR to grove IR (value semantics, before any
// lowering). Each is small and testable alone with grove-opt.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_TD
#define GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def GrovePrepareABI : Pass<"grove-prepare-abi", "ModuleOp"> {
  let summary = "records the model descriptor and marks public entry points";
  let description = [{
    Runs after grove-params-to-arguments. Checks that every public function
    can cross the C ABI (ranked tensor arguments and results of a supported
    dtype) and that every generated C symbol stays out of the runtime's
    namespace, then records the model descriptor (docs/abi.md) on the module
    as a typed attribute, `grove.abi.model = #grove.abi_model<...>`: each
    param with its kind, and for each entry its arguments by role (state
    read or written, or the caller's input), and the preconditions the
    arguments carry (`grove.below`, a forest's). The
    module name goes in `grove.abi.module`; each public function gets its
    entry index (`grove.abi.entry`) and input count (`grove.abi.inputs`).
    Arguments become `bufferization.writable` only where they are state the
    function writes. Public functions are renamed to
    `_grove_<module>_<name>` so that several models link into one program;
    the `grove.param` declarations, now in the descriptor, are erased.
  }];
  let dependentDialects = ["grove::GroveDialect"];
  let options = [
    Option<"moduleName", "module-name", "std::string", /*default=*/"\"\"",
           "Name of the generated library (default: the module's sym_name, "
           "else 'model')">,
    Option<"target", "target", "::mlir::grove::CompileTarget",
           /*default=*/"::mlir::grove::CompileTarget::Host",
           "Target the model is compiled for; recorded in the descriptor so "
           "that the runtime places tensors accordingly",
           [{::mlir::grove::getCompileTargetValues()}]>,
  ];
}

def GroveParamsToArguments : Pass<"grove-params-to-arguments", "ModuleOp"> {
  let summary = "turns grove.param state into function arguments with roles";
  let description = [{
    Each function gains one leading tensor argument per `grove.param` it
    reads or writes, itself or through the functions it calls, in
    declaration order. The argument carries its role, `grove.state = @name`,
    and `grove.writes` when the function writes that state; the runtime
    passes the context's buffer there, so every entry shares one copy of
    the state.

    Inside a function, `grove.get_param` becomes the argument, or the value
    of the latest `grove.set_param` of that param before it; calls forward
    the current values. Each written param gets one `grove.assign` of its
    final value just before the return: state writes are a call's last
    steps, after every allocation, so a call abandoned for memory leaves
    state as it was (docs/abi.md, "State"). Value semantics cannot carry
    an in-place write out of a callee, so calls of functions that write
    state are inlined first (a recursive writer is an error). The
    `grove.param` declarations stay for grove-prepare-abi, which describes
    them and erases them.
  }];
  let dependentDialects = ["func::FuncDialect"];
}

def GroveWriteStateInPlace
    : Pass<"grove-write-state-in-place", "func::FuncOp"> {
  let summary = "lets the linalg ops computing state writes write the state";
  let description = [{
    A linalg op on tensors each result of which is a state write (through
    `tensor.expand_shape` / `collapse_shape` to a `grove.assign`), computed
    into a `tensor.empty` its body never reads, moves to the end of its
    block, just before the assigns, and each init becomes the state
    argument's own view; the assign then copies the result onto that view,
    which bufferizes to a self-copy the canonicalizer drops. An optimizer
    step is then one pass over each parameter's data, with no allocation.
    State is still written after every allocation and every read of the old
    state (docs/decisions.md). An op whose state another such op reads, or
    that also computes a value that is not written, stays as it was and its
    writes stay copies; results never change.
  }];
  let dependentDialects = ["tensor::TensorDialect"];
}

def GroveFuseSplitAttention : Pass<"grove-fuse-split-attention"> {
  let summary = "forms grove.split_attention from ResNeSt's primitive ops";
  let description = [{
    Recognises the attention part of ResNeSt's SplAtConv2d as a frontend
    emits it and replaces it by one `grove.split_attention`:

    * radix R > 1: U sliced into R channel blocks (`grove.slice` along
      dimension 1), their sum, `grove.global_avg_pool`, a 1×1 grouped
      `grove.conv2d` with bias, `grove.batch_norm` (or none, where an
      exporter folded it into that convolution, as `torch.onnx.export` does
      in eval mode: the fused op then gets an exact identity norm, scale 1,
      shift 0, mean 0, variance 1 and epsilon 0), `grove.relu`, a second
      1×1 grouped `grove.conv2d` with bias, rSoftMax as `grove.reshape` to
      B × K × R × C/K, `grove.transpose [0, 2, 1, 3]`, `grove.softmax` over
      axis 1 and `grove.reshape` back to B × R·C × 1 × 1, then R attention
      slices multiplied with the matching U slices and summed;
    * radix 1: the same MLP on `global_avg_pool(U)`, `grove.sigmoid`, and
      one multiplication with U.

    Adds and multiplications may take their operands in either order, the
    sums may be associated in any way, and a sum may add a zero constant
    (Python's `sum()` starts from 0, and exporters keep it). Nothing is rewritten unless
    every intermediate is used only inside the pattern (the U slices once
    by the sum and once by their product), the slices tile the channels
    exactly, the radix and cardinality agree everywhere, the radix is at
    most 16 (the op's limit: its lowering unrolls the radix), and the
    convolutions are 1×1, unstrided, unpadded and grouped by the
    cardinality.
  }];
  let dependentDialects = ["grove::GroveDialect"];
}

def GroveAutocast : Pass<"grove-autocast", "ModuleOp"> {
  let summary = "runs functions in mixed precision under an op policy";
  let description = [{
    Before grove-autodiff. A function's policy is its `grove.autocast`
    attribute (#grove.autocast), else the module's, else the pass's
    `compute` option. Under it, walking the function in order: an op marked
    AutocastLow (GroveBase.td) gets its f32 operands converted to the
    compute type (bf16 or f16) and its f32 results retyped to it; an
    AutocastWide op gets operands this pass narrowed converted back to
    their type; an AutocastFollow op computes in the widest type of its
    float operands (narrowed where all of them are); any other op, the
    terminators, calls and state writes included, sees every value in the
    type it was written with. A retyping the op's verifier refuses is
    undone. Params stay as declared: autodiff carries each gradient back
    through `grove.convert`, so the f32 params are the master weights and
    the optimizers run as written.

    With a loss scale, each grove.value_and_grad of the function multiplies
    its value by the state `@loss_scale.scale` (f32) inside its body (in a
    module with several, `@<function>.loss_scale.scale`, and
    `@<function>.loss_scale_<i>.scale` for the i-th further one of a
    function); its value and
    gradients are divided by it after it; the scale halves where the
    gradients are not finite and doubles after `growth_interval` finite
    steps in a row (`.good_steps` beside `.scale`, i64), and every optimizer
    of the function skips non-finite steps (`skip_nonfinite`). The scale's
    writes are the one state a skipped step changes. The value and the
    gradients must be f32. The pass removes the `grove.autocast`
    attributes it applied.
  }];
  let dependentDialects = ["grove::GroveDialect", "tensor::TensorDialect",
                           "arith::ArithDialect"];
  let options = [
    Option<"compute", "compute", "std::string", /*default=*/"\"\"",
           "bf16 or f16: the policy of functions without a grove.autocast "
           "attribute, in a module without one (default none)">,
    Option<"lossScale", "loss-scale", "int64_t", /*default=*/"-1",
           "with `compute`: dynamic loss scaling from this scale (0 none; "
           "-1, the default: 65536 for f16, none for bf16)">,
    Option<"growthInterval", "growth-interval", "int64_t",
           /*default=*/"2000",
           "with a loss scale: finite steps in a row that double it">,
  ];
}

def GroveAutodiff : Pass<"grove-autodiff", "ModuleOp"> {
  let summary = "expands grove.value_and_grad into forward and backward ops";
  let description = [{
    Reverse-mode differentiation, op by op. Calls inside the body are
    inlined first (single-block callees). The body's ops then move before
    the `grove.value_and_grad`, which keeps their values for the backward,
    and the backward follows: seeded with 1 for the value, each op that
    depends on a differentiated param and reaches the value gets its
    operands' cotangents from its `VJPOpInterface`, in reverse order, a
    value used twice summing its cotangents. A param's gradient is the sum
    over its `grove.get_param`s in the body (zero when it does not reach
    the value). An op on that path without a VJP is a located error.
    What the backward recomputes rather than keeps is left to the linalg
    phase: elementwise producers fuse into the backward's consumers.
  }];
  let dependentDialects = ["grove::GroveDialect", "tensor::TensorDialect",
                           "arith::ArithDialect", "func::FuncDialect"];
}

def GroveExpandTrainingOps : Pass<"grove-expand-training-ops", "ModuleOp"> {
  let summary = "expands losses and optimizers into primitive grove ops";
  let description = [{
    After grove-autodiff (whose VJPs use the losses' closed forms):
    `grove.softmax_cross_entropy` becomes log_softmax, one_hot (smoothed),
    a product summed per row and the negated mean; `grove.mse_loss` the
    mean of the squared difference. `grove.batch_norm_training` becomes
    the batch statistics, the inference `grove.batch_norm` over them and
    the running statistics' update; `grove.lr_schedule` its formula over
    the step count. Each optimizer (OptimizerOpInterface) becomes
    `grove.get_param` of its state, its formula in elementwise grove ops
    and per-tensor norms, and `grove.set_param` of the new state and
    params; its state params are declared first, with their initial
    values, where the module does not declare them; the step counters are
    i64 and the bias corrections are computed from them in f64. With
    `skip_nonfinite`, every other state write of the optimizer's function
    moves to its end and keeps the old value on a skipped step. A loss over
    an empty batch, and a batch norm with one value per channel, get a
    run-time check that fails the call. `grove.dropout` becomes
    `grove.philox_dropout` over its generator's seed and offset (declared
    here), and a function that draws advances the offset by one at its end.
    Embedding ids that are an entry's argument are bounded at the ABI by
    the table's rows (`grove.below`), as labels are by the class count. A
    max pool whose gradient follows it in its block becomes
    `grove.max_pool2d_with_indices`, and the gradient reads its winners.
  }];
  let dependentDialects = ["grove::GroveDialect", "tensor::TensorDialect",
                           "arith::ArithDialect"];
}

def GroveTileAttention : Pass<"grove-tile-attention", "ModuleOp"> {
  let summary = "computes attention over key tiles with an online softmax";
  let description = [{
    After grove-autodiff: each `grove.attention` becomes an `scf.for` over
    tiles of `key_tile` keys whose body is grove ops on the [B·H, Sq, tile]
    scores of one tile (a batched matmul, the scale, the mask's tile, the
    causal bias), carrying each query row's running maximum, running sum
    and unnormalised output (FlashAttention's online softmax); each
    `grove.attention_grad` becomes two sweeps, one for the rows'
    log-sum-exp and one that recomputes each tile's probabilities and
    accumulates dQ while writing the tile's dK and dV
    (FlashAttention-2's backward). No [B, H, Sq, Sk] tensor is made.
    bf16/f16 operands are computed in f32.
  }];
  let dependentDialects = ["grove::GroveDialect", "scf::SCFDialect",
                           "tensor::TensorDialect", "arith::ArithDialect",
                           "linalg::LinalgDialect"];
}

def GroveInsertCollectives : Pass<"grove-insert-collectives", "ModuleOp"> {
  let summary = "makes each optimizer step data-parallel across ranks";
  let description = [{
    Runs between grove-autodiff and grove-expand-training-ops, while the
    gradients are the operands of the optimizer ops (docs/distributed.md).
    Every rank runs the same code on its own batch; for each optimizer:

    * **Gradients** (`error=none|feedback`): the gradients are grouped in
      the order the backward computes them into buckets of at most
      `bucket-bytes`, and each bucket is flattened, concatenated and
      averaged across ranks right after its last gradient is computed (so
      that its communication can overlap the rest of the backward), then
      split back into the optimizer's operands; how a bucket is sent is
      its compressor's (`lib/Dialect/Grove/Transforms/Collectives/`, one
      file each). `compressor=none` averages it densely. `compressor=grbs` averages one random block of
      1/`ratio` of the bucket, the same block on every rank (drawn by
      `grove.random_block` from a step counter, `@collectives.step`), and
      zero elsewhere; with `error=feedback` the bucket first adds its
      residual (`@collectives.bucket<i>.residual`, state) and keeps what
      was not sent there (EF-SGD). With `ratio=auto` a network cost model
      picks each bucket's compressor, from a comma-separated `compressor`
      list, and ratio, dense included (docs/distributed.md).
    * **Models** (`error=reset`, CSER): the gradients are not
      communicated; after the optimizer's local step each param averages a
      random block of 1/`ratio` of its elements (C1), or of
      1/`period-ratio` on steps that are a multiple of `sync-period` H
      (C2). Every rank's model then stays the common model minus its own
      residual, whose reset on the block is the averaging.
    * **Local AdaAlter**: a `grove.adaalter` with `period` H > 1 takes
      local steps, and on every H-th step each param and its accumulator
      are averaged across ranks and the accumulator becomes the frozen
      denominator.

    Collectives, counters and residuals are ordinary grove ops and state,
    so they bufferize, checkpoint and run like the rest of the step.

    Its options are declared with the pipelines' and grovec's, in
    PassOptions.def, not here; scripts/gen-docs.sh adds the section below
    from its rows (docs/passes.md, "Options").
  }];
  // The options are declared once, with the pipeline's and grovec's, in
  // PassOptions.def: the pass class declares them (InsertCollectives.cpp).
  let dependentDialects = ["grove::GroveDialect", "tensor::TensorDialect",
                           "arith::ArithDialect", "scf::SCFDialect"];
}

def GroveOverlapCollectives
    : Pass<"grove-overlap-collectives", "func::FuncOp"> {
  let summary = "splits collectives into a start and a wait, the wait late";
  let description = [{
    Each `grove.all_reduce` and `grove.all_gather` of a statically shaped
    input becomes a `grove.all_reduce_start` / `grove.all_gather_start`
    where it was and a `grove.collective_wait` just before the first op of
    its block that needs the result, or before the first op that may write
    memory if that comes earlier (state is written after every collective;
    docs/abi.md), so that the ranks exchange while the ops in between run
    (the host runtime moves started collectives on a communication thread,
    the CUDA runtime on the NCCL communicator's own stream;
    docs/distributed.md). To make room, the side-effect-free ops that
    depend on the result are first moved down to their own first users: a
    bucket's split and reshape wait with the optimizer step that reads
    them, while the backward of the layers below runs. They never move past
    an op that may write memory other than a collective (a state write may
    end what they read). A collective is left as it is when only reshapes,
    slices, constants and other collectives would run before its wait.

    grove-insert-collectives places each bucket's collectives right after
    its last gradient; both targets' pipelines run this pass just before
    bufferization (grovec --overlap-collectives, default true).
  }];
  let dependentDialects = ["grove::GroveDialect"];
}

def GroveBatchDynamicTrees : Pass<"grove-batch-dynamic-trees", "ModuleOp"> {
  let summary = "runs grove.tree_fold's cell once per group of nodes";
  let description = [{
    Lowers `grove.tree_fold` and its gradient `grove.tree_fold_grad`
    (docs/trees.md). A `grove.tree_schedule` (a runtime call) renumbers the
    batch's nodes children first, in groups; the fold becomes an `scf.for`
    over the groups that slices the group's input rows, gathers its
    children's states (`grove.gather`), runs the cell once on the group and
    writes its states back. Child-sum runs the edge cell on all the
    group's edges at once and sums each node's messages
    (`grove.segment_sum`); N-ary gathers each child slot, zeros where a
    node has no such child. The gradient runs the groups in reverse with
    the cells' VJPs, recomputing each cell from the saved node states.
    The first group has no children (they come in earlier groups): it is
    peeled off both loops, its cell inlined with zero child arguments, so
    products with them are dropped (zeros) and sums with them are their
    other term. A fold and its gradient lowered together share the
    schedule, and the fold's loop saves, a row per node (and per edge for
    the edge cell), the cell values the gradient's VJP regions would
    recompute and read; the gradient's loop reads them back instead.

    `mode=levels` groups the nodes by level (1 + the highest child level):
    one cell call per level. `mode=levels-by-arity` splits each level by
    arity, the signature DyNet and the JIT-batching paper group by (more
    calls, for comparison). `mode=nodes` makes one group a node, in
    post-order: the unbatched reference every batched form must equal.

    A forest whose offsets, children and roots are a function's arguments
    is marked for the runtime's check (`grove.forest`, and
    `grove.forest_nodes` on the argument a per-node input is made from).

    `mode` is declared with the pipelines' `tree-batching` in
    PassOptions.def, not here; scripts/gen-docs.sh adds the section below
    from its row (docs/passes.md, "Options").
  }];
  // `mode` is declared in PassOptions.def (BatchDynamicTrees.cpp).
  let dependentDialects = ["grove::GroveDialect", "tensor::TensorDialect",
                           "arith::ArithDialect", "scf::SCFDialect",
                           "linalg::LinalgDialect",
                           "bufferization::BufferizationDialect"];
}

#endif // GROVE_DIALECT_GROVE_TRANSFORMS_PASSES_TD
