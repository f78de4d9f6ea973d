//===- Pipelines.h - Grove's named pass pipelines ---------------*- C++ -*-===//
//
// grove-to-host and grove-to-cuda share everything up to bufferization;
// only the target stage differs:
//
//   buildGroveCommonPipeline      grove IR -> ABI prepared -> linalg on
//                                 tensors, fused -> bufferized memrefs
//   buildGroveToHostPipeline      common + BLAS calls + loops + LLVM dialect
//                                 + entry points
//   buildGroveToCudaPipeline      common + cuBLAS calls + one kernel per
//                                 fused linalg op + device buffers + NVVM +
//                                 embedded sm_90 cubin/PTX + LLVM dialect +
//                                 entry points
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_PIPELINES_PIPELINES_H
#define GROVE_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::grove {

/// The host's default for conv-library-max-positions (28x28; grovec's too):
/// f32 convolutions with at most this many output positions per channel run
/// on oneDNN's convolution (docs/passes.md).
constexpr int64_t kDefaultConvLibraryMaxPositions = 784;

struct GrovePipelineOptions
    : public PassPipelineOptions<GrovePipelineOptions> {
  PassOptions::Option<std::string> moduleName{
      *this, "module-name",
      llvm::cl::desc("C name of the generated library (default: the "
                     "module's sym_name, else 'model')"),
      llvm::cl::init("")};
  // Set by the target pipelines (grove-to-host, grove-to-cuda), recorded in
  // the model descriptor.
  std::string target = "host";
  PassOptions::Option<bool> fuseSplitAttention{
      *this, "fuse-split-attention",
      llvm::cl::desc("Form grove.split_attention from ResNeSt's primitive "
                     "ops (grove-fuse-split-attention)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> useBlas{
      *this, "blas",
      llvm::cl::desc("Call the runtime's BLAS for f32 matmuls (host)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> convLibrary{
      *this, "conv-library",
      llvm::cl::desc("Convolutions on the runtime's convolution service "
                     "instead of im2col + GEMM: host f32 on oneDNN "
                     "(grove_rt_conv2d_f32; faster or slower by up to 15% "
                     "on ResNeSt-50 depending on the machine's phase, "
                     "docs/passes.md), cuda f32/f16/bf16 on cuDNN "
                     "(grove_rt_cuda_conv2d_<type>; not yet measured on a "
                     "GPU, docs/cuda.md)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> convLibraryMaxPositions{
      *this, "conv-library-max-positions",
      llvm::cl::desc("Host: f32 convolutions whose output has at most this "
                     "many positions per channel (Oh*Ow) run on oneDNN's "
                     "convolution, larger ones as im2col + GEMM (default "
                     "784 = 28x28, where oneDNN measured faster; 0: none; "
                     "conv-library: all)"),
      llvm::cl::init(kDefaultConvLibraryMaxPositions)};
  PassOptions::Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Host: run the generated loops on the runtime's thread "
                     "team (grove-outline-parallel-loops)"),
      llvm::cl::init(true)};
  // CUDA target only.
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("CUDA target: GPU architecture"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("CUDA target: PTX ISA features (PTX 8.0 = CUDA 12+)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> cudaToolkit{
      *this, "cuda-toolkit",
      llvm::cl::desc("CUDA target: toolkit holding ptxas and fatbinary "
                     "(default: the one found at build time)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> gpuFormat{
      *this, "gpu-format",
      llvm::cl::desc("CUDA target: kernel format embedded in the host code: "
                     "fatbin (cubin + PTX, default), bin (cubin), isa (PTX "
                     "text, for FileCheck)"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size",
      llvm::cl::desc("CUDA target: threads per block of generated kernels"),
      llvm::cl::init(256)};
  PassOptions::Option<bool> narrowIndices{
      *this, "narrow-indices",
      llvm::cl::desc("CUDA target: kernels delinearize their thread ids in "
                     "32 bits where the space fits (convert-linalg-to-gpu-"
                     "launch{narrow-indices}; not yet measured on a GPU)"),
      llvm::cl::init(false)};
};

/// Grove-level cleanup, ABI preparation, lowering to linalg, elementwise
/// fusion and one-shot bufferization. Target independent.
void buildGroveCommonPipeline(OpPassManager &pm,
                              const GrovePipelineOptions &options);

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
