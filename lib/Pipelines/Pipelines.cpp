//===- Pipelines.cpp - Grove's named pass pipelines -----------------------===//

#include "grove/Pipelines/Pipelines.h"

#include "grove/Codegen/Passes.h"
#include "grove/Conversion/Passes.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"
#include "grove/Dialect/Linalg/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Affine/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::grove;

TargetPolicy mlir::grove::getHostPolicy() { return TargetPolicy(); }

TargetPolicy mlir::grove::getCudaPolicy() {
  TargetPolicy policy;
  policy.target = CompileTarget::Cuda;
  policy.convPerImage = false;
  policy.splitAttentionGemm = false;
  policy.segmentSumRows = false;
  policy.convLibraryLowPrecision = true;
  policy.convLibraryBySize = false;
  policy.convLibraryReadOnlyWeights = false;
  policy.convWeightGradLibrary = false;
  policy.poolGradPhases = false;
  policy.splitFullReductions = false;
  policy.fuseSiblingReductions = false;
  return policy;
}

void mlir::grove::addInputPhase(OpPassManager &pm,
                                const GrovePipelineOptions &) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

GroveInsertCollectivesOptions
mlir::grove::getInsertCollectivesOptions(const GrovePipelineOptions &options,
                                         const TargetPolicy &policy) {
  GroveInsertCollectivesOptions collectives;
#define GROVE_COLLECTIVES_OPTION(TYPE, FIELD, NAME, PIPELINE_FIELD,            \
                                 PIPELINE_NAME, DEFAULT, DESCRIPTION)          \
  collectives.FIELD = options.PIPELINE_FIELD;
#include "grove/Dialect/Grove/Transforms/PassOptions.def"
  collectives.target = policy.target;
  return collectives;
}

LogicalResult
mlir::grove::validatePipelineOptions(const GrovePipelineOptions &options,
                                     const TargetPolicy &policy,
                                     std::string &error) {
  const std::string &autocast = options.autocast;
  if (!autocast.empty() && autocast != "bf16" && autocast != "f16") {
    error = "--autocast must be bf16 or f16, got '" + autocast + "'";
    return failure();
  }
  if (options.lossScale < -1 || options.lossScaleGrowthInterval < 1) {
    error = "--loss-scale must be -1, 0 or positive and "
            "--loss-scale-growth-interval at least 1";
    return failure();
  }
  if (options.dataParallel) {
    std::string why;
    if (failed(checkInsertCollectivesOptions(
            getInsertCollectivesOptions(options, policy), why))) {
      error = "--data-parallel: " + why;
      return failure();
    }
  }
  return success();
}

void mlir::grove::addDifferentiatePhase(OpPassManager &pm,
                                        const GrovePipelineOptions &options,
                                        const TargetPolicy &policy) {
  // After the fusions, so that fused ops differentiate as one (split
  // attention's backward is fused too); losses expand once their
  // closed-form VJPs are built.
  // Before autodiff, so the backward differentiates the converts: f32
  // params get f32 gradients.
  GroveAutocastOptions autocast;
  autocast.compute = options.autocast;
  autocast.lossScale = options.lossScale;
  autocast.growthInterval = options.lossScaleGrowthInterval;
  pm.addPass(createGroveAutocast(autocast));
  pm.addPass(createGroveAutodiff());
  // The gradients are still the optimizers' operands here.
  if (options.dataParallel)
    pm.addPass(createGroveInsertCollectives(
        getInsertCollectivesOptions(options, policy)));
  pm.addPass(createGroveExpandTrainingOps());
  // Attention and its gradient both exist now: tile them over the keys.
  pm.addPass(createGroveTileAttention());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::grove::addTreesPhase(OpPassManager &pm,
                                const GrovePipelineOptions &options) {
  // Tree folds and their gradients become loops over the runtime's
  // schedule; CSE then shares one schedule between the two.
  GroveBatchDynamicTreesOptions trees;
#define GROVE_TREES_OPTION(TYPE, FIELD, NAME, PIPELINE_FIELD, PIPELINE_NAME,   \
                           DEFAULT, DESCRIPTION)                               \
  trees.FIELD = options.PIPELINE_FIELD;
#include "grove/Dialect/Grove/Transforms/PassOptions.def"
  pm.addPass(createGroveBatchDynamicTrees(trees));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::grove::addFusePhase(OpPassManager &pm,
                               const GrovePipelineOptions &options) {
  if (options.fuseSplitAttention)
    pm.addNestedPass<func::FuncOp>(createGroveFuseSplitAttention());
}

void mlir::grove::addABIPhase(OpPassManager &pm,
                              const GrovePipelineOptions &options,
                              const TargetPolicy &policy) {
  // State becomes arguments with roles, which the descriptor then lists;
  // the signatures still say what the user meant.
  pm.addPass(createGroveParamsToArguments());
  GrovePrepareABIOptions abi;
  abi.moduleName = options.moduleName;
  abi.target = policy.target;
  pm.addPass(createGrovePrepareABI(abi));
}

void mlir::grove::addLinalgPhase(OpPassManager &pm,
                                 const GrovePipelineOptions &options,
                                 const TargetPolicy &policy) {
  // Linalg on tensors: fuse elementwise chains (bias + activation, softmax's
  // steps) into single generics before any buffer exists. With
  // conv-library, convolutions go to the target's convolution library
  // (convert-linalg-to-blas); on the host, f32 ones on small images do by
  // default (conv-library-max-positions; docs/passes.md).
  ConvertGroveToLinalgOptions toLinalg;
  toLinalg.convPerImage = policy.convPerImage;
  toLinalg.splitAttentionGemm = policy.splitAttentionGemm;
  toLinalg.segmentSumRows = policy.segmentSumRows;
  toLinalg.convLibrary = options.convLibrary;
  toLinalg.convLibraryLowPrecision = policy.convLibraryLowPrecision;
  toLinalg.convLibraryMaxPositions =
      policy.convLibraryBySize ? int64_t(options.convLibraryMaxPositions) : 0;
  toLinalg.convLibraryReadOnlyWeights = policy.convLibraryReadOnlyWeights;
  toLinalg.convWeightGradLibrary = policy.convWeightGradLibrary;
  toLinalg.poolGradPhases = policy.poolGradPhases;
  pm.addNestedPass<func::FuncOp>(createConvertGroveToLinalg(toLinalg));
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createGroveFuseElementwise());
  pm.addNestedPass<func::FuncOp>(createGroveCollapseLoopDims());
  if (policy.splitFullReductions)
    pm.addNestedPass<func::FuncOp>(createGroveSplitFullReductions());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // After CSE, so that two reads of one tensor are one value.
  if (policy.fuseSiblingReductions)
    pm.addNestedPass<func::FuncOp>(createGroveFuseSiblingReductions());
}

void mlir::grove::addBufferizePhase(OpPassManager &pm) {
  // Function boundaries get identity-layout memrefs, which is what the
  // runtime passes (compact row-major).
  pm.addNestedPass<func::FuncOp>(createGroveWriteStateInPlace());
  pm.addPass(createCSEPass());
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Tiled attention's loops carry tensors whose next value is a new buffer
  // (a tile's statistics); the deallocation pipeline frees the old ones.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // The host's segment sums (segment-sum-rows) join the parallel loops that
  // linalg's lowering makes, which the host outlines.
  pm.addPass(createForallToParallelLoopPass());
  // An in-place insert_slice bufferizes to a copy between two equal
  // subviews: CSE makes them one value, and the canonicalizer drops the copy.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // A call that failed inside its code (a size check, a service) skips its
  // state writes, which are last now.
  pm.addPass(createGroveGuardStateWrites());
}

void mlir::grove::buildGroveCommonPipeline(OpPassManager &pm,
                                           const GrovePipelineOptions &options,
                                           const TargetPolicy &policy) {
  addInputPhase(pm, options);
  addFusePhase(pm, options);
  addDifferentiatePhase(pm, options, policy);
  addTreesPhase(pm, options);
  addABIPhase(pm, options, policy);
  addLinalgPhase(pm, options, policy);
  // After the linalg phase's fusion and CSE, which could move ops across
  // the waits it places; grove-write-state-in-place only moves state
  // updates later.
  // Started collectives move while the caller computes: the host runtime's
  // on a communication thread, the CUDA runtime's on the NCCL
  // communicator's stream (the staged transport completes them at once).
  if (options.dataParallel && options.overlapCollectives)
    pm.addNestedPass<func::FuncOp>(createGroveOverlapCollectives());
  addBufferizePhase(pm);
}

/// x86 has no bf16 arithmetic, and LLVM's promotion calls a libgcc helper
/// that GCC 12 lacks (__truncsfbf2): host code computes bf16 (and f16, as
/// LLVM would) in f32 and converts bf16 with integer operations.
static void addHostFloatLegalization(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(math::createMathExtendToSupportedTypes());
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16", "f16"};
  pm.addNestedPass<func::FuncOp>(
      arith::createArithEmulateUnsupportedFloats(emulate));
  // Reductions' running sums stay f32 across their loops (rounded once).
  pm.addNestedPass<func::FuncOp>(createGroveWidenLoopAccumulators());
  pm.addNestedPass<func::FuncOp>(createGroveExpandBF16Casts());
}

/// Host code to the LLVM dialect; with `withGpu`, launches, device buffers
/// and streams become calls of the runtime's mgpu* API.
static void addHostToLLVM(OpPassManager &pm, bool withGpu) {
  addHostFloatLegalization(pm);
  // f32 tanh as arithmetic the vectorizer widens (libm's is scalar); the
  // CUDA target's host code has none, its kernels use libdevice.
  if (!withGpu)
    pm.addPass(createGroveApproximateMath());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Heap buffers through MLIR's generic allocation functions, which the
  // runtime implements with a cache of large blocks (runtime/src/host/
  // Memory.cpp): the same activations are allocated on every call.
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  if (withGpu)
    pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  // erf and tanh have no LLVM intrinsic: call libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::grove::buildGroveToHostPipeline(
    OpPassManager &pm, const GrovePipelineOptions &options) {
  buildGroveCommonPipeline(pm, options, getHostPolicy());

  // Every buffer the function returns is owned by the caller (the runtime
  // frees it); temporaries are freed in place.
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Free activations after their last use, not when the forward pass ends.
  pm.addNestedPass<func::FuncOp>(createGroveShortenBufferLifetimes());
  pm.addPass(createGroveLegalizeMemRef());

  pm.addPass(createConvertGroveChecksToRuntime());
  if (options.useBlas)
    pm.addPass(createConvertLinalgToBlas());
  pm.addNestedPass<func::FuncOp>(createGroveParallelLoopsFirst());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  pm.addPass(createCanonicalizerPass());
  // Outermost parallel loops become range functions for the thread team.
  if (options.threads)
    pm.addPass(createGroveOutlineParallelLoops());
  // Innermost parallel loops carry their independence to LLVM's vectorizer;
  // the rest become plain loops.
  pm.addPass(createGroveHostLoopHints());
  pm.addPass(createParallelForToNestedForsPass());
  pm.addPass(createCanonicalizerPass());

  addHostToLLVM(pm, /*withGpu=*/false);
  pm.addPass(createGroveHostLoopMetadata());
  if (options.threads)
    pm.addPass(createGroveDispatchParallelCalls());
  pm.addPass(createGroveEmitEntryPoints());
}

std::string mlir::grove::getDefaultCudaToolkitPath() {
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    return home;
  return GROVE_DEFAULT_CUDA_TOOLKIT;
}

void mlir::grove::buildGroveToCudaPipeline(
    OpPassManager &pm, const GrovePipelineOptions &options) {
  buildGroveCommonPipeline(pm, options, getCudaPolicy());

  // Still on plain memrefs: make every op a library call or a kernel.
  pm.addPass(createGroveLegalizeMemRef());
  pm.addNestedPass<func::FuncOp>(createGroveStageDeviceConstants());
  ConvertLinalgToBlasOptions blas;
  blas.target = CompileTarget::Cuda;
  pm.addPass(createConvertLinalgToBlas(blas));
  ConvertLinalgToGPULaunchOptions launch;
  launch.blockSize = options.blockSize;
  launch.narrowIndices = options.narrowIndices;
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToGPULaunch(launch));
  pm.addNestedPass<func::FuncOp>(createGroveLowerSubgroupReduce());

  // Ownership-based deallocation on host memrefs, then move every heap
  // buffer to the device (deallocation does not know gpu.alloc).
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Device buffers go back to the stream-ordered cache after their last use.
  pm.addNestedPass<func::FuncOp>(createGroveShortenBufferLifetimes());
  pm.addPass(createGroveMemRefToGPU());
  pm.addPass(createConvertGroveChecksToRuntime());
  pm.addPass(createCanonicalizerPass());

  // Kernels: outline, thread one stream through each entry function, NVVM.
  // Constants and index math move into the kernels rather than becoming
  // kernel parameters.
  pm.addNestedPass<func::FuncOp>(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  GpuNVVMAttachTargetOptions nvvm;
  nvvm.chip = options.chip;
  nvvm.features = options.features;
  nvvm.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(nvvm));
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(affine::createAffineExpandIndexOpsPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());

  // Host side to the LLVM dialect (as for grove-to-host), launches and
  // buffers to the runtime's mgpu* shim. Scalars computed on the host for
  // kernels (a mean's 1/n) may be bf16 too.
  addHostToLLVM(pm, /*withGpu=*/true);

  // ptxas and fatbinary run here; the fatbin is embedded in the host module.
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = options.cudaToolkit.empty()
                           ? getDefaultCudaToolkitPath()
                           : std::string(options.cudaToolkit);
  binary.compilationTarget = options.gpuFormat;
  // One section holds every kernel image, so tools (grove-fatbin, the
  // tests) find them without symbol tables.
  binary.elfSection = ".grove_fatbin";
  pm.addPass(createGpuModuleToBinaryPass(binary));

  pm.addPass(createGroveEmitEntryPoints());
}

void mlir::grove::registerGrovePipelines() {
  PassPipelineRegistration<GrovePipelineOptions>(
      "grove-common",
      "Grove IR to bufferized linalg (the phases all targets share, with "
      "the host's policy)",
      [](OpPassManager &pm, const GrovePipelineOptions &options) {
        buildGroveCommonPipeline(pm, options, getHostPolicy());
      });
  PassPipelineRegistration<GrovePipelineOptions>(
      "grove-to-host",
      "Grove IR to the LLVM dialect for the host CPU, with the C ABI",
      buildGroveToHostPipeline);
  PassPipelineRegistration<GrovePipelineOptions>(
      "grove-to-cuda",
      "Grove IR to the LLVM dialect with embedded CUDA kernels (sm_90 by "
      "default), with the same C ABI as the host",
      buildGroveToCudaPipeline);
}
