//===- LocatedMessage.h - Run-time messages with their source place -*- C++
//-*-===//
//
// The messages run-time checks report (grove.agree_dims) start with the
// file:line:col of the op that needs them, by file name only: the message
// is compiled into the library, which must not depend on the folder it was
// built in.
//
//===----------------------------------------------------------------------===//

#ifndef GROVE_SUPPORT_LOCATEDMESSAGE_H
#define GROVE_SUPPORT_LOCATEDMESSAGE_H

#include "mlir/IR/Location.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlir::grove {

/// `what` after `loc`'s file name, line and column (where it has them).
inline std::string locatedMessage(Location loc, const llvm::Twine &what) {
  std::string message;
  llvm::raw_string_ostream os(message);
  if (auto flc = loc->findInstanceOf<FileLineColLoc>())
    os << llvm::sys::path::filename(flc.getFilename().getValue()) << ":"
       << flc.getLine() << ":" << flc.getColumn() << ": ";
  os << what;
  return message;
}

} // namespace mlir::grove

#endif // GROVE_SUPPORT_LOCATEDMESSAGE_H
