//===- Pipelines.h - Grove's named pass pipelines ---------------*- C++ -*-===//
//
// Every pipeline runs the same phases, in order; only the target phase and
// the TargetPolicy the target fills differ:
//
//   input          what the user wrote, verified and folded
//   fuse           the research fusions (grove-fuse-split-attention)
//   differentiate  grove-autodiff and the training ops' expansion, after
//                  the fusions so that a fused op's backward is fused too
//   abi            state to arguments with roles, the model descriptor
//   linalg         grove to linalg on tensors, elementwise fusion
//   bufferize      one-shot bufferization to memrefs
//   target         host: BLAS calls, loops, LLVM dialect, entry points
//                  cuda: cuBLAS/cuDNN calls, kernels, device buffers, NVVM,
//                  embedded cubin/PTX, LLVM dialect, entry points
//
// A new stage goes at the end of the phase it belongs to (its add*Phase
// function below); a target-dependent choice goes in TargetPolicy, which
// the shared phases read instead of testing the target's name.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_PIPELINES_PIPELINES_H
#define GROVE_PIPELINES_PIPELINES_H

#include "grove/Dialect/Grove/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::grove {

/// The host's default for conv-library-max-positions (28x28; grovec's too):
/// f32 convolutions with at most this many output positions per channel run
/// on oneDNN's convolution (docs/passes.md).
constexpr int64_t kDefaultConvLibraryMaxPositions = 784;

/// The options of every Grove pipeline, declared once in
/// PipelineOptions.def (grovec's flags come from the same list).
struct GrovePipelineOptions : public PassPipelineOptions<GrovePipelineOptions> {
#define GROVE_PIPELINE_OPTION(TYPE, FIELD, NAME, DEFAULT, DESCRIPTION)         \
  PassOptions::Option<TYPE> FIELD{*this, NAME, llvm::cl::desc(DESCRIPTION),    \
                                  llvm::cl::init(DEFAULT),                     \
                                  OptionValues<TYPE>::get()};
#include "grove/Pipelines/PipelineOptions.def"
};

/// What a target decides for the phases all targets share.
struct TargetPolicy {
  /// Recorded in the model descriptor (`target` line).
  CompileTarget target = CompileTarget::Host;
  /// Convolutions unfold one image at a time (the unfolded copy stays in
  /// cache), or the whole batch at once (a GPU has the memory and wants one
  /// batched GEMM).
  bool convPerImage = true;
  /// Split attention's FCs become GEMM library calls (host) or stay
  /// kernels (GPU).
  bool splitAttentionGemm = true;
  /// grove.segment_sum adds whole rows in an scf.forall over the segments
  /// (the columns vectorize), or is a linalg.generic over its elements (a
  /// GPU thread each).
  bool segmentSumRows = true;
  /// The convolution library takes f16/bf16 too (cuDNN), not only f32.
  bool convLibraryLowPrecision = false;
  /// Whether conv-library-max-positions applies (the host's small-image
  /// rule; oneDNN's convolution only).
  bool convLibraryBySize = true;
  /// Convolutions with weights the entry only reads go to the library at
  /// any size (the host's service keeps them prepared across calls).
  bool convLibraryReadOnlyWeights = true;
  /// f32 convolution weight gradients go to the library (the host's
  /// oneDNN backward-weights service); CUDA keeps im2col + one GEMM.
  bool convWeightGradLibrary = true;
  /// Pool gradients on static images by stride phases (convert-grove-to-
  /// linalg{pool-grad-phases}); the GPU keeps one gather an input element.
  bool poolGradPhases = true;
  /// Reductions to a scalar get a parallel loop of partial sums for the
  /// host's threads (grove-split-full-reductions); a GPU reduces a long
  /// row with a warp instead.
  bool splitFullReductions = true;
  /// Reductions that read the same data share one loop
  /// (grove-fuse-sibling-reductions); on the GPU not yet measured, so off.
  bool fuseSiblingReductions = true;
};

/// The policies of the two targets.
TargetPolicy getHostPolicy();
TargetPolicy getCudaPolicy();

/// The options of grove-insert-collectives that `options` ask for on the
/// policy's target (the rows of PassOptions.def, copied).
GroveInsertCollectivesOptions
getInsertCollectivesOptions(const GrovePipelineOptions &options,
                            const TargetPolicy &policy);

/// Checks what the passes would refuse of `options` on the policy's
/// target, before any model is read (grovec calls it: a bad value or an
/// unsupported combination is a usage error); `error` says what (the
/// data-parallel checks in grove-insert-collectives' option names). A value
/// outside an enum's set never gets here: its option refuses it.
LogicalResult validatePipelineOptions(const GrovePipelineOptions &options,
                                      const TargetPolicy &policy,
                                      std::string &error);

/// The phases, in order (see the top of this file).
void addInputPhase(OpPassManager &pm, const GrovePipelineOptions &options);
void addFusePhase(OpPassManager &pm, const GrovePipelineOptions &options);
void addDifferentiatePhase(OpPassManager &pm,
                           const GrovePipelineOptions &options,
                           const TargetPolicy &policy);
void addTreesPhase(OpPassManager &pm, const GrovePipelineOptions &options);
void addABIPhase(OpPassManager &pm, const GrovePipelineOptions &options,
                 const TargetPolicy &policy);
void addLinalgPhase(OpPassManager &pm, const GrovePipelineOptions &options,
                    const TargetPolicy &policy);
void addBufferizePhase(OpPassManager &pm);

/// The shared phases, input to bufferize, for `policy`'s target.
void buildGroveCommonPipeline(OpPassManager &pm,
                              const GrovePipelineOptions &options,
                              const TargetPolicy &policy);

/// The host target: common pipeline, then BLAS calls, loops and the LLVM
/// dialect with the generated C ABI.
void buildGroveToHostPipeline(OpPassManager &pm,
                              const GrovePipelineOptions &options);

/// The CUDA target: common pipeline, then cuBLAS calls, GPU kernels, device
/// buffers and the LLVM dialect with the same C ABI as the host, the
/// kernels embedded as a fatbin (cubin for `chip` plus PTX).
void buildGroveToCudaPipeline(OpPassManager &pm,
                              const GrovePipelineOptions &options);

/// The toolkit the CUDA pipeline uses when its option is empty: $CUDA_HOME,
/// else the one found when Grove was built (may be empty).
std::string getDefaultCudaToolkitPath();

/// Registers `grove-to-host`, `grove-to-cuda` (and the common stage as
/// `grove-common`) with the pass pipeline registry.
void registerGrovePipelines();

} // namespace mlir::grove

#endif // GROVE_PIPELINES_PIPELINES_H
