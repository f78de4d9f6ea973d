//===- WeightsCheck.h - Check a weights file as the runtime will -*- C++
//-*-===//

#ifndef GROVE_TOOLS_GROVEC_WEIGHTSCHECK_H
#define GROVE_TOOLS_GROVEC_WEIGHTSCHECK_H

#include "grove/ModelSchema.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir::grove {

/// Creates a runtime context from the model's descriptor (so a library the
/// runtime would refuse is never written) and, when `weightsPath` is not
/// empty, loads it, so grovec accepts exactly the files the compiled library
/// will. On failure `error` holds the runtime's message.
LogicalResult checkWithRuntime(const ::grove::schema::ModelDesc &model,
                               llvm::StringRef weightsPath, std::string &error);

} // namespace mlir::grove

#endif // GROVE_TOOLS_GROVEC_WEIGHTSCHECK_H
