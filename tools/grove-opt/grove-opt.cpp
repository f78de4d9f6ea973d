//===- grove-opt.cpp - mlir-opt with the grove dialect and passes ---------===//

#include "grove/InitAll.h"
#include "grove/Support/InputFile.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

/// Prints a failure of readModelInput as a diagnostic.
static void reportInputError(const std::string &error, bool located) {
  if (located)
    llvm::errs() << error << "\n";
  else
    llvm::WithColor::error(llvm::errs(), "grove-opt") << error << "\n";
}

/// Standard input, read bounded and checked like a file (grove/Support/
/// InputFile.h), then processed as mlir-opt does.
static mlir::LogicalResult runOnStdin(llvm::StringRef outputFilename,
                                      mlir::DialectRegistry &registry) {
  std::string error;
  bool located = false;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::grove::readModelInput("-", error, located);
  if (!input) {
    reportInputError(error, located);
    return mlir::failure();
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return mlir::failure();
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry,
                            mlir::MlirOptMainConfig::createFromCLOptions())))
    return mlir::failure();
  output->keep();
  return mlir::success();
}

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::grove::registerAllGrovePasses();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::grove::registerAllGroveDialects(registry);
  // gpu-module-to-binary (grove-to-cuda) serializes through the NVVM target.
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "Grove optimizer driver\n", registry);
  if (inputFilename == "-")
    return mlir::asMainReturnCode(runOnStdin(outputFilename, registry));
  // A device, a FIFO, a huge file or one nested past the parser's stack is
  // a diagnostic, not a hang, an abort or a crash.
  std::string error;
  bool located = false;
  if (!mlir::grove::readModelInput(inputFilename, error, located)) {
    reportInputError(error, located);
    return 1;
  }
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
