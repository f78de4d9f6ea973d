//===- grovec.cpp - The Grove ahead-of-time compiler driver ---------------===//
//
// grovec model.mlir -o OUT [--target=host] [--emit=lib|obj|llvm|mlir]
//
// Parses and verifies a grove module, runs the target's named pipeline,
// generates code in-process and writes OUT/lib<name>.a, OUT/<name>.h (and
// OUT/<name>.safetensors when --weights is given). Exit status: 0 success,
// 1 an error in the input or the environment, 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "OutputSet.h"
#include "WeightsCheck.h"

#include "grove/InitAll.h"
#include "grove/Pipelines/Pipelines.h"
#include "grove/Support/CNames.h"
#include "grove/Target/HostCodegen.h"
#include "grove/Target/ModelDescriptor.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::grove;
namespace cl = llvm::cl;

namespace {
enum class Emit { Mlir, Llvm, Obj, Lib };

cl::OptionCategory groveCategory("grovec options");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.mlir>"),
                               cl::cat(groveCategory));
cl::opt<std::string> outputDir("o", cl::desc("Output directory (created)"),
                               cl::value_desc("dir"), cl::cat(groveCategory));
cl::opt<std::string> target("target", cl::desc("Target: host (default), cuda"),
                            cl::init("host"), cl::cat(groveCategory));
cl::opt<std::string> cudaChip("cuda-chip",
                              cl::desc("CUDA target: GPU architecture "
                                       "(default sm_90; PTX is embedded too)"),
                              cl::init("sm_90"), cl::cat(groveCategory));
cl::opt<std::string> cudaToolkit(
    "cuda-toolkit",
    cl::desc("CUDA target: toolkit with ptxas and fatbinary (default: "
             "$CUDA_HOME, else the one Grove was built with)"),
    cl::init(""), cl::cat(groveCategory));
cl::opt<bool> fuseSplitAttention(
    "fuse-split-attention",
    cl::desc("Fuse ResNeSt split attention into one op (default true)"),
    cl::init(true), cl::cat(groveCategory));
cl::opt<bool> convLibrary(
    "conv-library",
    cl::desc("Convolutions on the runtime's convolution service instead of "
             "im2col + GEMM: host f32 on oneDNN, cuda f32/f16/bf16 on cuDNN "
             "(default false; docs/passes.md, docs/cuda.md)"),
    cl::init(false), cl::cat(groveCategory));
cl::opt<int64_t> convLibraryMaxPositions(
    "conv-library-max-positions",
    cl::desc("Host target: f32 convolutions with at most this many output "
             "positions per channel (Oh*Ow) run on oneDNN's convolution "
             "(default 784 = 28x28; 0: none; docs/passes.md)"),
    cl::init(kDefaultConvLibraryMaxPositions), cl::cat(groveCategory));
cl::opt<bool> narrowIndices(
    "cuda-narrow-indices",
    cl::desc("CUDA target: kernels delinearize thread ids in 32 bits where "
             "the space fits (default false; not yet measured on a GPU)"),
    cl::init(false), cl::cat(groveCategory));
cl::opt<bool> threads(
    "host-threads",
    cl::desc("Host target: run generated loops on the runtime's thread "
             "team (default true)"),
    cl::init(true), cl::cat(groveCategory));
cl::opt<Emit> emit("emit", cl::desc("What to write (default: lib)"),
                   cl::values(clEnumValN(Emit::Mlir, "mlir",
                                         "LLVM-dialect MLIR after the pipeline"),
                              clEnumValN(Emit::Llvm, "llvm",
                                         "optimised LLVM IR (.ll)"),
                              clEnumValN(Emit::Obj, "obj",
                                         "object file and C header"),
                              clEnumValN(Emit::Lib, "lib",
                                         "static library and C header")),
                   cl::init(Emit::Lib), cl::cat(groveCategory));
cl::opt<unsigned> optLevel("O", cl::desc("Optimisation level 0-3 (default 3)"),
                           cl::Prefix, cl::init(3), cl::cat(groveCategory));
cl::opt<std::string> cpu("cpu",
                         cl::desc("CPU to generate code for: portable "
                                  "baseline (default), native, or an LLVM "
                                  "CPU name"),
                         cl::init(""), cl::cat(groveCategory));
cl::opt<std::string> libName("name",
                             cl::desc("Library name (default: module "
                                      "sym_name, else the file name)"),
                             cl::init(""), cl::cat(groveCategory));
cl::opt<std::string> weights("weights",
                             cl::desc("safetensors file with the model's "
                                      "params: checked as the runtime will "
                                      "load it, and copied to "
                                      "OUT/<name>.safetensors (lib and obj)"),
                             cl::value_desc("file"), cl::init(""),
                             cl::cat(groveCategory));

constexpr int kExitInputError = 1;
constexpr int kExitUsage = 2;

int usageError(const Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "grovec") << msg << "\n";
  llvm::errs() << "run 'grovec --help' for usage\n";
  return kExitUsage;
}

int inputError(const Twine &msg) {
  llvm::WithColor::error(llvm::errs(), "grovec") << msg << "\n";
  return kExitInputError;
}

/// A C identifier from a file stem: `my-model.v2` -> `my_model_v2`,
/// `9lives` -> `m_9lives`. Names starting with `_` are reserved in C at file
/// scope, so they get the `m` prefix too; standard input is `model`.
std::string sanitize(StringRef stem) {
  if (stem == "-" || stem.empty())
    return "model";
  std::string s;
  for (char c : stem)
    s.push_back(llvm::isAlnum(c) ? c : '_');
  if (!llvm::isAlpha(s[0]))
    s.insert(0, "m_");
  return s;
}

/// Shows the MLIR debugging flags grovec documents next to its own.
void exposeMlirOptions() {
  auto &opts = cl::getRegisteredOptions();
  for (StringRef name : {"mlir-timing", "mlir-print-ir-after-all",
                         "mlir-print-ir-before-all", "mlir-timing-display"})
    if (auto *opt = opts.lookup(name))
      opt->addCategory(groveCategory);
}
} // namespace

/// Whether LLVM's NVPTX backend knows `chip` (sm_90, sm_90a, ...): asked
/// up front, an unknown one is a usage error rather than a warning from
/// LLVM and an error on every op.
static bool isKnownCudaChip(const std::string &chip) {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTargetMC();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *nvptx = llvm::TargetRegistry::lookupTarget(triple, error);
  // Without an NVPTX backend to ask, the pipeline says.
  return !nvptx || isKnownProcessor(*nvptx, triple, chip);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  registerAsmPrinterCLOptions();
  exposeMlirOptions();
  cl::HideUnrelatedOptions(groveCategory);

  std::string cliErrors;
  llvm::raw_string_ostream cliErrs(cliErrors);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "grovec: compile a grove model ahead of time into a library\n\n"
          "  grovec model.mlir -o OUT [--target=host] [--emit=lib]\n",
          &cliErrs)) {
    llvm::errs() << cliErrors;
    llvm::errs() << "run 'grovec --help' for usage\n";
    return kExitUsage;
  }
  if (inputFile.empty())
    return usageError("no input file");
  if (outputDir.empty())
    return usageError("no output directory (-o OUT)");
  if (!libName.empty() && !isCIdentifier(libName))
    return usageError("--name='" + libName + "' is not a C identifier");
  if (optLevel > 3)
    return usageError("-O" + Twine(optLevel) + " is not one of -O0..-O3");
#if !GROVE_HAVE_CUDA_TARGET
  if (target == "cuda")
    return inputError("the cuda target is not available in this build of "
                      "grovec (no CUDA toolkit was found when Grove was "
                      "built; see docs/cuda.md)");
#endif
  if (target != "host" && target != "cuda")
    return usageError("unknown target '" + target +
                      "' (expected host or cuda)");
  // The default needs no check (nor the NVPTX backend's start-up).
  if (cudaChip.getNumOccurrences() &&
      (!StringRef(cudaChip).starts_with("sm_") || !isKnownCudaChip(cudaChip)))
    return usageError("--cuda-chip='" + cudaChip +
                      "' is not an sm_NN architecture LLVM's NVPTX backend "
                      "knows");
  if (convLibraryMaxPositions < 0)
    return usageError("--conv-library-max-positions=" +
                      Twine(convLibraryMaxPositions) + " is negative");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registerAllGroveDialects(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  MLIRContext context(registry);
  context.disableMultithreading();
  // Diagnostics point at the user's source; the op dump is for compiler
  // developers (grove-opt shows it).
  context.printOpOnDiagnostic(false);

  std::string openError;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFile, &openError);
  if (!input)
    return inputError(openError);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);

  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return kExitInputError;

  std::string name = libName;
  if (name.empty())
    name = module->getSymName()
               ? module->getSymName()->str()
               : sanitize(llvm::sys::path::stem(inputFile));

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return usageError("invalid pass manager options");
  applyDefaultTimingPassManagerCLOptions(pm);
  GrovePipelineOptions pipelineOptions;
  pipelineOptions.moduleName = name;
  pipelineOptions.fuseSplitAttention = fuseSplitAttention;
  pipelineOptions.threads = threads;
  pipelineOptions.convLibrary = convLibrary;
  pipelineOptions.convLibraryMaxPositions = convLibraryMaxPositions;
  if (target == "cuda") {
    pipelineOptions.chip = cudaChip;
    pipelineOptions.narrowIndices = narrowIndices;
    pipelineOptions.cudaToolkit = cudaToolkit;
    std::string toolkit =
        cudaToolkit.empty() ? getDefaultCudaToolkitPath() : cudaToolkit;
    if (!llvm::sys::fs::exists(toolkit + "/bin/ptxas"))
      return inputError("no ptxas in the CUDA toolkit '" + toolkit +
                        "' (set --cuda-toolkit or CUDA_HOME)");
    buildGroveToCudaPipeline(pm, pipelineOptions);
  } else {
    buildGroveToHostPipeline(pm, pipelineOptions);
  }
  if (failed(pm.run(*module)))
    return kExitInputError;

  std::string error;
  FailureOr<std::string> descText = findEmbeddedDescriptor(*module, name);
  std::string descError;
  FailureOr<ModelDesc> model =
      succeeded(descText) ? parseModelDescriptor(*descText, descError)
                          : FailureOr<ModelDesc>(failure());
  if (failed(model))
    return inputError("internal: the lowered module has no valid model "
                      "descriptor " + descError);
  if (failed(checkWithRuntime(model->module, *descText, model->entries.size(),
                              weights, error)))
    return inputError(error);

  HostCodegenOptions codegen;
  codegen.optLevel = optLevel;
  codegen.cpu = cpu;
  std::unique_ptr<llvm::TargetMachine> tm =
      createHostTargetMachine(codegen, error);
  if (!tm)
    return usageError(error);
  OutputSet outputs(outputDir);
  if (std::string error; failed(outputs.prepare(error)))
    return inputError(error);

  if (emit == Emit::Mlir) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    outputs.add(name + ".mlir", std::move(text));
    return outputs.commit() ? 0 : kExitInputError;
  }

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateAndOptimize(*module, llvmContext, *tm, optLevel);
  if (!llvmModule)
    return kExitInputError;

  if (emit == Emit::Llvm) {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvmModule->print(os, nullptr);
    outputs.add(name + ".ll", std::move(text));
    return outputs.commit() ? 0 : kExitInputError;
  }

  llvm::SmallVector<char, 0> object;
  if (failed(emitObject(*llvmModule, *tm, object, error)))
    return inputError(error);
  outputs.add(name + ".h",
              emitCHeader(*model, llvm::sys::path::filename(inputFile)));
  if (emit == Emit::Obj) {
    outputs.add(name + ".o", std::string(object.begin(), object.end()));
  } else {
    FailureOr<std::string> archive = buildStaticLibrary(
        name + ".o", StringRef(object.data(), object.size()), error);
    if (failed(archive))
      return inputError("cannot build the archive: " + error);
    outputs.add("lib" + name + ".a", std::move(*archive));
  }
  if (!weights.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(weights, /*IsText=*/false);
    if (!buffer)
      return inputError("cannot read '" + weights +
                        "': " + buffer.getError().message());
    outputs.add(name + ".safetensors", (*buffer)->getBuffer().str());
  }
  return outputs.commit() ? 0 : kExitInputError;
}
