//===- ModelDescriptor.h - The descriptor in the compiler -------*- C++ -*-===//
//
// The compiler reads the descriptor it embedded (its one definition is
// runtime/src/schema) back from the lowered module to write the C header.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_TARGET_MODELDESCRIPTOR_H
#define GROVE_TARGET_MODELDESCRIPTOR_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include "ModelSchema.h"

#include <string>

namespace mlir::grove {

namespace schema = ::grove::schema;
using schema::ModelDesc;

/// Parses descriptor text; on failure returns failure and sets `error`.
FailureOr<ModelDesc> parseModelDescriptor(llvm::StringRef text,
                                          std::string &error);

/// The descriptor text embedded in a module lowered by grove-to-host (the
/// initializer of `_grove.<moduleName>.desc`).
FailureOr<std::string> findEmbeddedDescriptor(ModuleOp module,
                                              llvm::StringRef moduleName);

/// The C header declaring the model definition and its typed entry points,
/// with every signature as data. `sourceName` is named in its first
/// comment: the file name only, so builds in other folders are equal.
std::string emitCHeader(const ModelDesc &model, llvm::StringRef sourceName);

} // namespace mlir::grove

#endif // GROVE_TARGET_MODELDESCRIPTOR_H
