//===- ModelDescriptor.h - The descriptor in the compiler -------*- C++ -*-===//
//
// grovec reads the descriptor JSON embedded in the lowered module with the
// one reader (grove/ModelSchema.h), as any loader of the library would, to
// write the C header and check weights.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_TARGET_MODELDESCRIPTOR_H
#define GROVE_TARGET_MODELDESCRIPTOR_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include "grove/ModelSchema.h"

#include <string>

namespace mlir::grove {

namespace schema = ::grove::schema;
using schema::ModelDesc;

/// Parses descriptor JSON; on failure returns failure and sets `error`.
FailureOr<ModelDesc> parseModelDescriptor(llvm::StringRef text,
                                          std::string &error);

/// The descriptor JSON embedded in a module lowered by grove-to-host (the
/// initializer of `_grove.<moduleName>.desc`).
FailureOr<std::string> findEmbeddedDescriptor(ModuleOp module,
                                              llvm::StringRef moduleName);

/// The C header declaring the model definition and its typed entry points,
/// with every signature as data. `sourceName` is named in its first
/// comment: the file name only, so builds in other folders are equal.
std::string emitCHeader(const ModelDesc &model, llvm::StringRef sourceName);

} // namespace mlir::grove

#endif // GROVE_TARGET_MODELDESCRIPTOR_H
