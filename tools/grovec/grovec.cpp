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
#include "grove/Support/InputFile.h"
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
// The pipeline options grovec exposes, declared once (PipelineOptions.def):
// each DRIVER option is a flag `<FLAG>` here, stored in `<FIELD>Flag`.
#define GROVE_DRIVER_OPTION(TYPE, FIELD, NAME, FLAG, DEFAULT, DESCRIPTION)     \
  cl::opt<TYPE> FIELD##Flag(FLAG, cl::desc(DESCRIPTION), cl::init(DEFAULT),    \
                            cl::cat(groveCategory),                            \
                            OptionValues<TYPE>::get());
#include "grove/Pipelines/PipelineOptions.def"
cl::opt<Emit> emit(
    "emit", cl::desc("What to write (default: lib)"),
    cl::values(clEnumValN(Emit::Mlir, "mlir",
                          "LLVM-dialect MLIR after the pipeline"),
               clEnumValN(Emit::Llvm, "llvm", "optimised LLVM IR (.ll)"),
               clEnumValN(Emit::Obj, "obj", "object file and C header"),
               clEnumValN(Emit::Lib, "lib", "static library and C header")),
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

/// The pipeline's options: grovec's flags (PipelineOptions.def) and the
/// library's name.
static void bindPipelineOptions(GrovePipelineOptions &options, StringRef name) {
  options.moduleName = name.str();
#define GROVE_DRIVER_OPTION(TYPE, FIELD, NAME, FLAG, DEFAULT, DESCRIPTION)     \
  options.FIELD = FIELD##Flag;
#include "grove/Pipelines/PipelineOptions.def"
}

/// The checks of the command line that need no input; 0 when it is fine,
/// else the exit status (after a message).
static int checkUsage() {
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
  if (chipFlag.getNumOccurrences() &&
      (!StringRef(chipFlag).starts_with("sm_") || !isKnownCudaChip(chipFlag)))
    return usageError("--cuda-chip='" + chipFlag +
                      "' is not an sm_NN architecture LLVM's NVPTX backend "
                      "knows");
  if (convLibraryMaxPositionsFlag < 0)
    return usageError("--conv-library-max-positions=" +
                      Twine(convLibraryMaxPositionsFlag) + " is negative");
  // What the passes would refuse, refused before the model is read.
  GrovePipelineOptions options;
  bindPipelineOptions(options, /*name=*/"");
  std::string error;
  if (failed(validatePipelineOptions(
          options, target == "cuda" ? getCudaPolicy() : getHostPolicy(),
          error)))
    return usageError(error);
  return 0;
}

/// Runs the target's pipeline on `module`; 0 or the exit status.
static int runPipeline(MLIRContext &context, ModuleOp module, StringRef name) {
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return usageError("invalid pass manager options");
  applyDefaultTimingPassManagerCLOptions(pm);
  GrovePipelineOptions options;
  bindPipelineOptions(options, name);
  if (target == "cuda") {
    std::string toolkit =
        cudaToolkitFlag.empty() ? getDefaultCudaToolkitPath() : cudaToolkitFlag;
    if (!llvm::sys::fs::exists(toolkit + "/bin/ptxas"))
      return inputError("no ptxas in the CUDA toolkit '" + toolkit +
                        "' (set --cuda-toolkit or CUDA_HOME)");
    buildGroveToCudaPipeline(pm, options);
  } else {
    buildGroveToHostPipeline(pm, options);
  }
  return failed(pm.run(module)) ? kExitInputError : 0;
}

/// Generates code for the lowered `module` and writes the outputs --emit
/// asks for, all or none.
static int writeOutputs(ModuleOp module, const ModelDesc &model,
                        StringRef name) {
  HostCodegenOptions codegen;
  codegen.optLevel = optLevel;
  codegen.cpu = cpu;
  std::string error;
  std::unique_ptr<llvm::TargetMachine> tm =
      createHostTargetMachine(codegen, error);
  if (!tm)
    return usageError(error);
  OutputSet outputs(outputDir);
  if (failed(outputs.prepare(error)))
    return inputError(error);

  if (emit == Emit::Mlir) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    outputs.add((name + ".mlir").str(), std::move(text));
    return outputs.commit() ? 0 : kExitInputError;
  }

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateAndOptimize(module, llvmContext, *tm, optLevel);
  if (!llvmModule)
    return kExitInputError;

  if (emit == Emit::Llvm) {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvmModule->print(os, nullptr);
    outputs.add((name + ".ll").str(), std::move(text));
    return outputs.commit() ? 0 : kExitInputError;
  }

  llvm::SmallVector<char, 0> object;
  if (failed(emitObject(*llvmModule, *tm, object, error)))
    return inputError(error);
  outputs.add((name + ".h").str(),
              emitCHeader(model, llvm::sys::path::filename(inputFile)));
  if (emit == Emit::Obj) {
    outputs.add((name + ".o").str(), std::string(object.begin(), object.end()));
  } else {
    FailureOr<std::string> archive = buildStaticLibrary(
        (name + ".o").str(), StringRef(object.data(), object.size()), error);
    if (failed(archive))
      return inputError("cannot build the archive: " + error);
    outputs.add(("lib" + name + ".a").str(), std::move(*archive));
  }
  if (!weights.empty()) {
    auto buffer = llvm::MemoryBuffer::getFile(weights, /*IsText=*/false);
    if (!buffer)
      return inputError("cannot read '" + weights +
                        "': " + buffer.getError().message());
    outputs.add((name + ".safetensors").str(), (*buffer)->getBuffer().str());
  }
  return outputs.commit() ? 0 : kExitInputError;
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
  if (int status = checkUsage())
    return status;

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

  // Bounded: a device, a FIFO, a huge file or nesting past the parser's
  // stack is a diagnostic (grove/Support/InputFile.h).
  std::string readError;
  bool located = false;
  std::unique_ptr<llvm::MemoryBuffer> input =
      readModelInput(inputFile, readError, located);
  if (!input && located) {
    llvm::errs() << readError << "\n";
    return kExitInputError;
  }
  if (!input)
    return inputError(readError);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return kExitInputError;

  std::string name = libName;
  if (name.empty())
    name = module->getSymName() ? module->getSymName()->str()
                                : sanitize(llvm::sys::path::stem(inputFile));
  if (int status = runPipeline(context, *module, name))
    return status;

  FailureOr<std::string> descText = findEmbeddedDescriptor(*module, name);
  std::string error;
  FailureOr<ModelDesc> model = succeeded(descText)
                                   ? parseModelDescriptor(*descText, error)
                                   : FailureOr<ModelDesc>(failure());
  if (failed(model))
    return inputError("internal: the lowered module has no valid model "
                      "descriptor " +
                      error);
  if (failed(checkWithRuntime(*model, weights, error)))
    return inputError(error);
  return writeOutputs(*module, *model, name);
}
