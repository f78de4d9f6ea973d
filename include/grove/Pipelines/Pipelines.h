//===- Pipelines.h - Grove's named pass pipelines ---------------*- C++ -*-===//
//
// grove-to-host and (later) grove-to-cuda share everything up to
// bufferization; only the target stage differs:
//
//   buildGroveCommonPipeline      grove IR -> ABI prepared -> linalg on
//                                 tensors, fused -> bufferized memrefs
//   buildGroveToHostPipeline      common + BLAS calls + loops + LLVM dialect
//                                 + entry points
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_PIPELINES_PIPELINES_H
#define GROVE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::grove {

struct GrovePipelineOptions
    : public PassPipelineOptions<GrovePipelineOptions> {
  PassOptions::Option<std::string> moduleName{
      *this, "module-name",
      llvm::cl::desc("C name of the generated library (default: the "
                     "module's sym_name, else 'model')"),
      llvm::cl::init("")};
  PassOptions::Option<bool> useBlas{
      *this, "blas",
      llvm::cl::desc("Call the runtime's BLAS for f32 matmuls (host)"),
      llvm::cl::init(true)};
};

/// Grove-level cleanup, ABI preparation, lowering to linalg, elementwise
/// fusion and one-shot bufferization. Target independent.
void buildGroveCommonPipeline(OpPassManager &pm,
                              const GrovePipelineOptions &options);

/// The host target: common pipeline, then BLAS calls, loops and the LLVM
/// dialect with the generated C ABI.
void buildGroveToHostPipeline(OpPassManager &pm,
                              const GrovePipelineOptions &options);

/// Registers `grove-to-host` (and the common stage as
/// `grove-common`) with the pass pipeline registry.
void registerGrovePipelines();

} // namespace mlir::grove

#endif // GROVE_PIPELINES_PIPELINES_H
