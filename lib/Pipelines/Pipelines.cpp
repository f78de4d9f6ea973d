//===- Pipelines.cpp - Grove's named pass pipelines -----------------------===//

#include "grove/Pipelines/Pipelines.h"

#include "grove/Conversion/Passes.h"
#include "grove/Dialect/Grove/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::grove;

void mlir::grove::buildGroveCommonPipeline(
    OpPassManager &pm, const GrovePipelineOptions &options) {
  // Grove level: fold what the user wrote, then fix the ABI while the
  // signatures still say what the user meant.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  GrovePrepareABIOptions abi;
  abi.moduleName = options.moduleName;
  pm.addPass(createGrovePrepareABI(abi));
  pm.addPass(createGroveParamsToArguments());

  // Linalg on tensors: fuse elementwise chains (bias + activation, softmax's
  // steps) into single generics before any buffer exists.
  pm.addNestedPass<func::FuncOp>(createConvertGroveToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addNestedPass<func::FuncOp>(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());

  // Bufferization: function boundaries get identity-layout memrefs, which is
  // what the runtime passes (compact row-major).
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
}

void mlir::grove::buildGroveToHostPipeline(
    OpPassManager &pm, const GrovePipelineOptions &options) {
  buildGroveCommonPipeline(pm, options);

  // Every buffer the function returns is owned by the caller (the runtime
  // frees it); temporaries are freed in place.
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createGroveLegalizeMemRef());

  pm.addPass(createConvertGroveChecksToRuntime());
  if (options.useBlas)
    pm.addPass(createConvertLinalgToBlas());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createCanonicalizerPass());

  // To the LLVM dialect.
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  // erf and tanh have no LLVM intrinsic: call libm.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createConvertToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());

  pm.addPass(createGroveEmitEntryPoints());
}

void mlir::grove::registerGrovePipelines() {
  PassPipelineRegistration<GrovePipelineOptions>(
      "grove-common",
      "Grove IR to bufferized linalg (the stages all targets share)",
      buildGroveCommonPipeline);
  PassPipelineRegistration<GrovePipelineOptions>(
      "grove-to-host",
      "Grove IR to the LLVM dialect for the host CPU, with the C ABI",
      buildGroveToHostPipeline);
}
