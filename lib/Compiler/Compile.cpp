//===- Compile.cpp - The compiler as a library call -----------------------===//

#include "grove/Compiler/Compile.h"

#include "grove/InitAll.h"
#include "grove/Pipelines/Pipelines.h"
#include "grove/Support/CNames.h"
#include "grove/Support/InputFile.h"
#include "grove/Target/HostCodegen.h"
#include "grove/Target/ModelDescriptor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Target/TargetMachine.h"

#include <mutex>

using namespace mlir;
using namespace mlir::grove;

namespace {

/// A usage error: not located in the source (the caller's options).
LogicalResult usage(llvm::raw_ostream &os, const Twine &message) {
  os << "error: " << message << "\n";
  return failure();
}

/// The pipeline's options from their option string, checked as grovec
/// checks its flags.
LogicalResult bindOptions(const CompileOptions &options,
                          GrovePipelineOptions &pipeline,
                          llvm::raw_ostream &os) {
  std::string parseErrors;
  llvm::raw_string_ostream errs(parseErrors);
  if (failed(pipeline.parseFromString(options.pipelineOptions, errs)))
    return usage(os, "bad compile options '" + options.pipelineOptions +
                         "': " + StringRef(parseErrors).trim());
  std::string error;
  if (failed(validatePipelineOptions(pipeline, getHostPolicy(), error)))
    return usage(os, error);
  return success();
}

/// Every dialect, extension and translation a grove module may use.
DialectRegistry &getRegistry() {
  static DialectRegistry registry;
  static std::once_flag once;
  std::call_once(once, [] {
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registerAllToLLVMIRTranslations(registry);
    registerAllGroveDialects(registry);
  });
  return registry;
}

/// The lowered module's object file, header and descriptor.
LogicalResult generate(ModuleOp module, StringRef sourceName,
                       const CompileOptions &options, CompiledModel &out,
                       llvm::raw_ostream &os) {
  std::string error;
  FailureOr<std::string> descText = findEmbeddedDescriptor(module, out.name);
  FailureOr<ModelDesc> model = succeeded(descText)
                                   ? parseModelDescriptor(*descText, error)
                                   : FailureOr<ModelDesc>(failure());
  if (failed(model))
    return usage(os, "internal: the lowered module has no valid model "
                     "descriptor " +
                         error);
  HostCodegenOptions codegen;
  codegen.optLevel = options.optLevel;
  codegen.cpu = options.cpu;
  std::unique_ptr<llvm::TargetMachine> tm =
      createHostTargetMachine(codegen, error);
  if (!tm)
    return usage(os, error);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateAndOptimize(module, llvmContext, *tm, options.optLevel);
  if (!llvmModule)
    return failure();
  llvm::SmallVector<char, 0> object;
  if (failed(emitObject(*llvmModule, *tm, object, error)))
    return usage(os, error);
  out.object.assign(object.begin(), object.end());
  out.header = emitCHeader(*model, llvm::sys::path::filename(sourceName));
  out.descriptor = std::move(*descText);
  return success();
}

} // namespace

LogicalResult mlir::grove::compileSource(StringRef source, StringRef sourceName,
                                         const CompileOptions &options,
                                         CompiledModel &out,
                                         llvm::raw_ostream &os) {
  if (options.target != "host")
    return usage(os, "target '" + options.target +
                         "' cannot be compiled in process (host only; use "
                         "grovec for cuda)");
  if (options.optLevel > 3)
    return usage(os, "optimisation level " + Twine(options.optLevel) +
                         " is not one of 0..3");
  if (!options.name.empty() && !isCIdentifier(options.name))
    return usage(os, "name '" + options.name + "' is not a C identifier");
  GrovePipelineOptions pipeline;
  if (failed(bindOptions(options, pipeline, os)))
    return failure();

  // The parser recurses once a bracket: a text nested too deep is a
  // diagnostic, not a stack overflow in the caller's process.
  auto [line, column] = findExcessiveNesting(source, kMaxInputNesting);
  if (line) {
    os << sourceName << ":" << line << ":" << column
       << ": error: nesting deeper than " << kMaxInputNesting
       << " levels; the parser would overflow its stack\n";
    return failure();
  }
  MLIRContext context(getRegistry());
  context.disableMultithreading();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, sourceName), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, os);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return failure();

  out.name = options.name;
  if (out.name.empty())
    out.name = module->getSymName() ? module->getSymName()->str() : "model";
  pipeline.moduleName = out.name;
  PassManager pm(&context);
  buildGroveToHostPipeline(pm, pipeline);
  if (failed(pm.run(*module)))
    return failure();
  return generate(*module, sourceName, options, out, os);
}
