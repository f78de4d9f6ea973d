//===- Compile.h - The compiler as a library call ---------------*- C++ -*-===//
//
// One call from grove source text to a host object file, its C header and
// its model descriptor: what grovec does for --emit=obj, without a process
// or files. The Python package (python/) compiles through it in process.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_COMPILER_COMPILE_H
#define GROVE_COMPILER_COMPILE_H

#include "mlir/Support/LLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::grove {

struct CompileOptions {
  /// "host" (the one target compiled in process for now).
  std::string target = "host";
  /// 0-3, as grovec's -O.
  unsigned optLevel = 3;
  /// The host CPU to tune and select instructions for ("native", a CPU
  /// name, or empty for the generic x86-64 baseline).
  std::string cpu;
  /// The library's C name; empty: the module's symbol name, else "model".
  std::string name;
  /// GrovePipelineOptions as a pass-pipeline option string
  /// ("autocast=bf16 data-parallel=true"): the rows of PipelineOptions.def
  /// by their option names.
  std::string pipelineOptions;
};

struct CompiledModel {
  std::string name;
  /// An ELF relocatable object: the entries, the packed functions and the
  /// `<name>_model` definition (abi.h).
  std::string object;
  /// The C header grovec writes beside the library.
  std::string header;
  /// The model descriptor (JSON, docs/abi.md).
  std::string descriptor;
};

/// Compiles `source`, named `sourceName` in diagnostics. Every diagnostic
/// (`<sourceName>:line:col: error: ...`, or a located usage message) is
/// written to `diagnostics`; fails when there was an error.
LogicalResult compileSource(llvm::StringRef source, llvm::StringRef sourceName,
                            const CompileOptions &options, CompiledModel &out,
                            llvm::raw_ostream &diagnostics);

} // namespace mlir::grove

#endif // GROVE_COMPILER_COMPILE_H
