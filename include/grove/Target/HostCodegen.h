//===- HostCodegen.h - LLVM-dialect module to a native object ---*- C++ -*-===//
//
// In-process code generation: translate to LLVM IR, run LLVM's O-level
// pipeline with the target machine attached (so the vectoriser knows the
// CPU), and emit an object file. Shelling out to mlir-translate | llc skips
// the IR optimiser and gives much slower code (docs/perf.md, "Design
// measurements").
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_TARGET_HOSTCODEGEN_H
#define GROVE_TARGET_HOSTCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

#include <memory>
#include <string>

namespace mlir::grove {

struct HostCodegenOptions {
  /// 0..3, for both the IR optimiser and instruction selection.
  unsigned optLevel = 3;
  /// "" for a portable baseline of the host architecture, "native" for the
  /// CPU grovec runs on, or an LLVM CPU name (e.g. "skylake-avx512").
  std::string cpu;
};

/// Whether `target` knows the processor `cpu` on `triple` (asked of a default
/// subtarget: building one for an unknown name makes LLVM print its own
/// warning). grovec checks --cpu and --cuda-chip with it.
bool isKnownProcessor(const llvm::Target &target, const llvm::Triple &triple,
                      llvm::StringRef cpu);

/// The target machine for the host triple; null with `error` set on failure
/// (unknown CPU name, no registered target).
std::unique_ptr<llvm::TargetMachine>
createHostTargetMachine(const HostCodegenOptions &options, std::string &error);

/// Translates an LLVM-dialect module and optimises it for `tm`. Emits a
/// diagnostic on `module` and returns null on failure.
std::unique_ptr<llvm::Module> translateAndOptimize(ModuleOp module,
                                                   llvm::LLVMContext &ctx,
                                                   llvm::TargetMachine &tm,
                                                   unsigned optLevel);

/// Emits `module` as a relocatable object into `object`.
LogicalResult emitObject(llvm::Module &module, llvm::TargetMachine &tm,
                         llvm::SmallVectorImpl<char> &object,
                         std::string &error);

/// The bytes of a deterministic static library (`ar` format, GNU symbol
/// table) holding one object member.
FailureOr<std::string> buildStaticLibrary(llvm::StringRef memberName,
                                          llvm::StringRef object,
                                          std::string &error);

} // namespace mlir::grove

#endif // GROVE_TARGET_HOSTCODEGEN_H
