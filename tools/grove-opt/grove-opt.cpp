//===- grove-opt.cpp - mlir-opt with the grove dialect and passes ---------===//

#include "grove/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

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

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Grove optimizer driver\n", registry));
}
