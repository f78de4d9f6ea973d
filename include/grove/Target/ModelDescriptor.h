//===- ModelDescriptor.h - The textual model descriptor ---------*- C++ -*-===//
//
// The compiler's view of the descriptor documented in docs/abi.md, parsed
// back from the lowered module to write the C header.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_TARGET_MODELDESCRIPTOR_H
#define GROVE_TARGET_MODELDESCRIPTOR_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace mlir::grove {

struct TensorSig {
  std::string name;
  std::string dtype; // f32, f16, bf16, f64, i1, i8, i16, i32, i64
  llvm::SmallVector<int64_t> shape; // -1 = dynamic
};

struct EntrySig {
  std::string name;
  std::vector<TensorSig> inputs, outputs;
};

struct ModelDescriptor {
  std::string module;
  std::string target = "host";
  std::vector<TensorSig> params;
  std::vector<EntrySig> entries;
};

/// Parses descriptor text; on failure returns failure and sets `error`.
FailureOr<ModelDescriptor> parseModelDescriptor(llvm::StringRef text,
                                                std::string &error);

/// The descriptor text embedded in a module lowered by grove-to-host (the
/// initializer of `_grove.<moduleName>.desc`).
FailureOr<std::string> findEmbeddedDescriptor(ModuleOp module,
                                              llvm::StringRef moduleName);

/// The C header declaring the model definition and its typed entry points,
/// with every signature as data.
std::string emitCHeader(const ModelDescriptor &model,
                        llvm::StringRef sourceName);

} // namespace mlir::grove

#endif // GROVE_TARGET_MODELDESCRIPTOR_H
