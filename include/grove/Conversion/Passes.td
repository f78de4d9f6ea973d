//===- Passes.td - Grove conversion passes ---------------------------------===//
//
// Conversions between levels: grove to linalg, run-time checks and named
// linalg ops to runtime calls, the lowered functions to the C ABI. The
// folder names under lib/Conversion spell the lowering graph; target code
// generation that is not a conversion is in include/grove/Codegen.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_CONVERSION_PASSES_TD
#define GROVE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertGroveToLinalg : Pass<"convert-grove-to-linalg"> {
  let summary = "lowers grove compute ops to linalg, tensor and arith";
  let description = [{
    Elementwise ops become `linalg.generic`s (broadcasting through indexing
    maps, so that `linalg-fuse-elementwise-ops` can fuse chains), matmuls
    become `linalg.matmul`/`linalg.batch_matmul` with transposes in their
    indexing maps, reductions `linalg.reduce`, softmax a reduce-map-reduce
    sequence, and data movement `tensor`/`linalg` ops. Dynamic sizes are
    read with `tensor.dim`. `grove.param`/`grove.get_param` are left to the
    ABI passes. With `conv-per-image`, an im2col convolution runs in an
    `scf.for` over the batch (pad, unfold and GEMM one image at a time), so
    its unfolded copy is one image's (it stays in cache) instead of the
    whole batch's (hundreds of MB at batch 16, written to and read back
    from memory); the host pipelines set it. `grove.segment_sum` is one
    `linalg.generic` over its result whose body loops over the element's
    segment (a GPU thread an element), or with `segment-sum-rows` (the host
    pipelines) an `scf.forall` over the segments whose body zeroes its row
    and adds the segment's input rows with `linalg.add` on row slices: the
    columns are the innermost loop, which LLVM vectorizes, where a loop
    inside every element keeps the generic and what fuses with it scalar.
    With `split-attention-gemm`,
    each of the two FCs of a one-group f32 `grove.split_attention` is a
    `linalg.matmul` (so a GEMM library call) when its weight has at most
    64Ki elements, and otherwise when the batch is above 1, chosen with an
    `scf.if` on a dynamic batch; the host pipelines set it
    too (the GPU keeps its FC kernels). With `conv-library`, every f32
    convolution but the 1x1 GEMMs is the padded input (`tensor.pad`) and a
    `linalg.conv_2d_nchw_fchw` (grouped: `conv_2d_ngchw_gfchw` on views)
    into a zero-filled result, which `convert-linalg-to-blas` turns into
    the runtime's convolution service (oneDNN on the host, cuDNN on the
    GPU); with `conv-library-low-precision` f16 and bf16 convolutions take
    that form too (the CUDA service runs every float type). The pipelines
    set `conv-library` only with their own `conv-library` option (it takes
    precedence over `conv-per-image`, which f16/bf16 keep); grove-to-cuda
    sets `conv-library-low-precision` with it. With
    `conv-library-max-positions=N` (N > 0), f32 convolutions whose output
    has at most N positions per channel (Oh·Ow) take the library form as
    well, the larger ones im2col + GEMM; grove-to-host sets N = 784 (28x28)
    by default, where oneDNN's blocked kernels measured faster. With
    `conv-library-read-only-weights`, f32 convolutions whose weights are an
    entry's state argument without `grove.writes` (a weight the entry only
    reads) take the library form at any size, and so do unstrided,
    unpadded, ungrouped 1x1 ones (else GEMMs) whose output has at most 49
    positions (7x7): the host's service keeps such
    weights in its own layouts across calls (blocked, or Winograd for 3x3
    ones), which pays on every image size; grove-to-host sets it. With
    `conv-weight-grad-library`, an f32 `grove.conv2d_weight_grad` is one
    `linalg.generic` over 5-D grouped views of the padded input and the
    output gradient (five parallel loops over the gradient, three
    reductions over the images and positions, a multiply-add) into a
    zero-filled G x Fg x Cg x Kh x Kw, which `convert-linalg-to-blas` turns
    into the runtime's weight-gradient service (oneDNN's backward-weights
    convolution on the host); grove-to-host sets it. Without it, the
    patches are gathered (im2col) and one batched GEMM a call reduces them.
    A pool's gradient (`grove.max_pool2d_grad`, `grove.avg_pool2d_grad`) is
    one `linalg.generic` over the input that gathers, for each element, the
    output gradients of the windows that hold it (max: where it is the
    window's winner; avg: divided by the window's divisor). With
    `pool-grad-phases` (grove-to-host sets it), pools whose windows overlap
    (a kernel larger than the stride in a dimension) on static images take
    the input by stride phases instead: rows s·a + r are held by windows
    a + t for a set of t fixed per phase r, so each phase is a generic over
    (n, c, a, b) whose inputs are the output gradient (divided by the
    divisors first, for avg pools, and zero-padded at its borders) and the
    max pool's winners, read through constant-offset maps, and the phases
    are `tensor.insert_slice`d into the result with stride s.
  }];
  let options = [
    Option<"convPerImage", "conv-per-image", "bool", /*default=*/"false",
           "unfold and multiply im2col convolutions one image at a time">,
    Option<"convLibrary", "conv-library", "bool", /*default=*/"false",
           "f32 convolutions as linalg named convolutions on the padded "
           "input (for convert-linalg-to-blas's library call)">,
    Option<"convLibraryLowPrecision", "conv-library-low-precision", "bool",
           /*default=*/"false",
           "with conv-library, f16 and bf16 convolutions too">,
    Option<"convLibraryMaxPositions", "conv-library-max-positions",
           "int64_t", /*default=*/"0",
           "f32 convolutions with at most this many output positions per "
           "channel (Oh*Ow) take the library form too (0: none)">,
    Option<"convLibraryReadOnlyWeights", "conv-library-read-only-weights",
           "bool", /*default=*/"false",
           "f32 convolutions whose weights are state the entry only reads "
           "take the library form at any size (1x1 GEMMs only up to 7x7 "
           "outputs)">,
    Option<"convWeightGradLibrary", "conv-weight-grad-library", "bool",
           /*default=*/"false",
           "f32 grove.conv2d_weight_grad as the linalg.generic that "
           "convert-linalg-to-blas turns into the weight-gradient service "
           "(default: im2col and one GEMM)">,
    Option<"poolGradPhases", "pool-grad-phases", "bool", /*default=*/"false",
           "max and avg pool gradients on static images by stride phases "
           "(default: one gather an input element)">,
    Option<"segmentSumRows", "segment-sum-rows", "bool", /*default=*/"false",
           "grove.segment_sum as an scf.forall over the segments adding "
           "row slices (the host's form; default: one linalg.generic)">,
    Option<"splitAttentionGemm", "split-attention-gemm", "bool",
           /*default=*/"false",
           "one-group f32 split-attention FCs as matmuls (small ones always, "
           "the others from batch 2 on)">
  ];
  let dependentDialects = [
    "arith::ArithDialect", "bufferization::BufferizationDialect",
    "linalg::LinalgDialect", "math::MathDialect", "scf::SCFDialect",
    "tensor::TensorDialect"
  ];
}

def ConvertGroveChecksToRuntime
    : Pass<"convert-grove-checks-to-runtime", "ModuleOp"> {
  let summary = "lowers grove.agree_dims and the world queries to runtime "
                "calls";
  let description = [{
    Each `grove.agree_dims` becomes `scf.if (lhs != rhs)` around a call to
    `grove_rt_dim_mismatch(lhs, rhs, message)` (runtime/include/grove/abi.h)
    and `arith.minui lhs, rhs`: the runtime fails the call with
    GROVE_ERROR_INVALID_ARGUMENT and the code never reads out of bounds.

    `grove.world_size` and `grove.world_rank` become calls of
    `grove_rt_world_size()` and `grove_rt_world_rank()` (an i64, cast to
    index). They stay ops until here, after bufferization, so that the
    passes before see their declared effect (they only read the context)
    where a call would have unknown ones.
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "LLVM::LLVMDialect", "scf::SCFDialect"];
}

def ConvertLinalgToBlas : Pass<"convert-linalg-to-blas", "ModuleOp"> {
  let summary = "replaces memref matmuls and convolutions by calls into "
                "the runtime's GEMM and convolution services";
  let description = [{
    After bufferization, `linalg.matmul` and `linalg.batch_matmul` on
    memrefs (any strides, transposes given by their indexing maps) become
    calls into the runtime (runtime/include/grove/abi.h):

    * `target=host`: f32 and bf16, `grove_rt_matmul_<type>` /
      `grove_rt_batch_matmul_<type>` (oneDNN or OpenBLAS; bf16 accumulates
      in f32 and rounds once). f16 stays linalg.
    * `target=cuda`: f32, f16 and bf16 (f32 accumulation), always as a
      strided-batched GEMM `grove_rt_cuda_gemm_<type>` on rank-3 views (a
      2-D operand is a batch of one), which calls cuBLAS on the context's
      stream.

    A zero `linalg.fill` of the output right before the matmul is folded
    into `beta = 0`; an operand without a batch dimension (a shared rhs, or
    a shared lhs such as a 1x1 convolution's weights) gets a zero batch
    stride. Matmuls that do not fit (mixed element types) stay linalg.

    `linalg.conv_2d_nchw_fchw` and `linalg.conv_2d_ngchw_gfchw` on memrefs
    whose output a zero `linalg.fill` initialises become the runtime's
    convolution service on 5-D grouped views (a unit group dimension for
    the ungrouped form), with their padding, strides and dilations; others
    stay linalg. A zero padding the compiler materialised (a fresh buffer,
    zero-filled, the input copied into its interior, nothing else reading
    it and nothing writing the input in between) is folded into the call's
    pads: the call reads the unpadded input and the padded copy goes.

    * `target=host`: f32, `grove_rt_conv2d_f32` (oneDNN's convolution;
      pads top, left, bottom, right).
    * `target=cuda`: f32, f16 and bf16, `grove_rt_cuda_conv2d_<type>`
      (cuDNN; `pad_h`, `pad_w`: only a symmetric padding folds, others stay
      materialised).
  }];
  let options = [
    Option<"target", "target", "::mlir::grove::CompileTarget",
           /*default=*/"::mlir::grove::CompileTarget::Host",
           "whose runtime services to call",
           [{::mlir::grove::getCompileTargetValues()}]>
  ];
  let dependentDialects = ["func::FuncDialect", "arith::ArithDialect",
                           "memref::MemRefDialect"];
}

def GroveEmitEntryPoints : Pass<"grove-emit-entry-points", "ModuleOp"> {
  let summary = "generates the C ABI of a lowered model (LLVM dialect)";
  let description = [{
    Runs on LLVM-dialect IR produced from a module that went through
    `grove-prepare-abi`. For each entry point it emits a packed function
    (`void(void **)`, see docs/abi.md) calling the `_mlir_ciface_` wrapper,
    and the typed `<module>_<function>(ctx, inputs..., outputs...)` that
    forwards to `grove_rt_invoke`; then the `<module>_model` definition with
    the descriptor and the table of packed functions. The descriptor is the
    module's `#grove.abi_model` with the sizes the lowering found equal
    (`grove.abi.equal_dims`) added as `equal_dim` preconditions, written
    once as JSON, also into the section `grove_models`. Internal functions
    get internal linkage.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
}

#endif // GROVE_CONVERSION_PASSES_TD
